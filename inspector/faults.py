"""Fault injection for the takeover tests: a conductor dies or freezes at a
named step boundary, so a test can replay each window of a takeover.

Off unless the process's environment names an arming file in
``IRONIC_INSPECTOR_FAULT``. The file holds one line, ``<boundary>
<action>`` (``exit``: the process SIGKILLs itself; ``stop``: it SIGSTOPs
itself); a boundary is ``<point>:<step>``, e.g. ``locked:processing``.
The first process to reach an armed boundary takes the file away (a
rename: one process only) and acts; the others go on.
"""

import logging
import os
import signal

LOG = logging.getLogger(__name__)

ENV = "IRONIC_INSPECTOR_FAULT"

POINTS = ("claimed", "locked", "powered", "applied", "ended")
"""Where a step can be stopped: right after its claim, after it took the
node's lock, after the start powered the node on (before ``waiting`` is
written), after processing wrote its results to Ironic (before the final
state), and after the step ended with the lock still held."""


def at(point: str, step: str, uuid: str) -> None:
    """Act on the armed fault if it names ``point:step``; else nothing."""
    path = os.environ.get(ENV)
    if not path:
        return
    try:
        with open(path) as armed:
            boundary, _, action = armed.read().strip().partition(" ")
    except OSError:
        return  # not armed (or fired already)
    if boundary != f"{point}:{step}":
        return
    try:
        os.rename(path, f"{path}.fired")
    except OSError:
        return  # another process fired it first
    LOG.critical(
        "Fault injection (%s): %s at %s of node %s", ENV, action, boundary, uuid
    )
    os.kill(os.getpid(), signal.SIGSTOP if action == "stop" else signal.SIGKILL)
