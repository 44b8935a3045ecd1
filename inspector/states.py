"""The introspection state machine (same table as ironic-inspector v1)."""

from inspector import exceptions

STARTING = "starting"
WAITING = "waiting"
PROCESSING = "processing"
FINISHED = "finished"
ERROR = "error"
REAPPLYING = "reapplying"
ENROLLING = "enrolling"
ABORTING = "aborting"

ALL = (STARTING, WAITING, PROCESSING, FINISHED, ERROR, REAPPLYING, ENROLLING, ABORTING)
"""Every state, in the order the reference lists them."""

TRANSIENT = (STARTING, WAITING, PROCESSING, REAPPLYING, ENROLLING, ABORTING)
"""States in which an introspection is still running (finished_at unset)."""

FINAL = (FINISHED, ERROR)

WORKING = (STARTING, PROCESSING, REAPPLYING, ENROLLING, ABORTING)
"""Transient states in which a conductor, not the ramdisk, must act next.
Each has an owner (or a deadline to be claimed by) so that work lost with
a conductor is found and resumed."""

START = "start"
WAIT = "wait"
PROCESS = "process"
FINISH = "finish"
FAIL = "error"
TIMEOUT = "timeout"
ABORT = "abort"
ABORT_END = "abort_end"
REAPPLY = "reapply"

TRANSITIONS: dict[str, dict[str, str]] = {
    STARTING: {WAIT: WAITING, FAIL: ERROR, TIMEOUT: ERROR},
    WAITING: {START: STARTING, PROCESS: PROCESSING, TIMEOUT: ERROR, ABORT: ABORTING},
    PROCESSING: {FINISH: FINISHED, FAIL: ERROR, TIMEOUT: ERROR},
    FINISHED: {START: STARTING, FINISH: FINISHED, REAPPLY: REAPPLYING},
    ERROR: {START: STARTING, FAIL: ERROR, ABORT: ERROR, REAPPLY: REAPPLYING},
    REAPPLYING: {FINISH: FINISHED, FAIL: ERROR, TIMEOUT: ERROR, REAPPLY: REAPPLYING},
    ENROLLING: {PROCESS: PROCESSING, FAIL: ERROR, TIMEOUT: ERROR},
    ABORTING: {TIMEOUT: ERROR, ABORT_END: ERROR},
}

IN_BAND = "in-band"
OUT_OF_BAND = "out-of-band"
AUTO = "auto"
MODES = (IN_BAND, OUT_OF_BAND, AUTO)
"""How an introspection learns the hardware (API 1.26, doc/redfish.md):
the ramdisk, the node's Redfish BMC, or the BMC first and the ramdisk for
what it lacks. Not states: a record keeps its mode beside its state."""

ABORTED_MESSAGE = "Canceled by operator"
TIMEOUT_MESSAGE = "Introspection timeout"


def next_state(state: str, event: str) -> str:
    """Return the state ``event`` leads to from ``state``.

    :raises InvalidTransition: when the table has no such transition.
    """
    try:
        return TRANSITIONS[state][event]
    except KeyError:
        raise exceptions.InvalidTransition(state=state, event=event) from None


def allows(state: str, event: str) -> bool:
    return event in TRANSITIONS.get(state, {})
