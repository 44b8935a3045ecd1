"""Handing a recorded step to a conductor, and ending it when none takes it."""

import logging
from collections.abc import Callable

from inspector import exceptions, states
from inspector.conductor.rpcapi import ConductorClient
from inspector.db import introspections
from inspector.db.introspections import Introspection
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)

Cast = Callable[[ConductorClient, str, int], str]
"""An RPC client method, e.g. ``ConductorClient.process``: it casts the
step of one node at one version and returns the conductor that took it."""


def claim_within(rt: Runtime) -> float:
    """Seconds a conductor has to pick up a step this API hands over."""
    return float(rt.conf.coordination.claim_timeout)


def hand_over(rt: Runtime, record: Introspection, cast: Cast) -> None:
    """Cast the step ``record`` is in; if no conductor takes it, end it.

    The state was already written, so leaving it would strand the
    introspection until its timeout: it ends in ``error`` naming the cause
    (an abort ends as aborted), and the client gets the 503 to retry.
    """
    try:
        if rt.rpc is None:
            raise exceptions.ServiceUnavailable(reason="no conductor is available")
        cast(rt.rpc, record.uuid, record.version)
    except exceptions.ServiceUnavailable as exc:
        event = states.ABORT_END if record.state == states.ABORTING else states.FAIL
        prefix = states.ABORTED_MESSAGE if event == states.ABORT_END else "Failed"
        try:
            introspections.transition(
                rt.db,
                record.uuid,
                event,
                claim_within=claim_within(rt),
                expected_version=record.version,
                error=f"{prefix}: {exc.message}",
            )
        except (exceptions.StaleState, exceptions.InvalidTransition):
            pass  # something else moved it on; it is not stranded
        raise
