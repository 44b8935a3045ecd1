"""Handing a recorded step to a conductor.

Once the API has recorded a step (the ramdisk's data stored, a start, an
abort or a reapply written), a conductor does it: when no conductor can be
reached right now (the coordination backend, the broker or every picked
conductor is away), the step is left unclaimed with its claim deadline
already passed, so the leader conductor's next sweep
(:mod:`inspector.conductor.takeover`) resumes it. A transient outage never
ends an introspection, and never makes a ramdisk's retry land on a node
that has moved on.
"""

import logging
from collections.abc import Callable

from inspector import exceptions
from inspector.conductor.rpcapi import ConductorClient
from inspector.db import claims
from inspector.db.introspections import IntrospectionRecord
from inspector.outages import OutageLog
from inspector.runtime import ApiRuntime

LOG = logging.getLogger(__name__)

OUTAGE = OutageLog(LOG, "Handing steps over to conductors")
"""One warning when casts start failing, one line when they work again;
each step left for the sweep is an INFO line naming its node."""

Cast = Callable[[ConductorClient, str, int], str]
"""An RPC client method, e.g. ``ConductorClient.process``: it casts the
step of one node at one version and returns the conductor that took it."""


def claim_within(rt: ApiRuntime) -> float:
    """Seconds a conductor has to pick up a step this API hands over."""
    return float(rt.conf.coordination.claim_timeout)


def require_conductor(rt: ApiRuntime) -> None:
    """Before recording an operator's request: is there a conductor to do
    it? Nothing is written when there is none, so the 503 changes nothing
    and the client's retry starts afresh.

    :raises ServiceUnavailable: no live, enabled conductor is known, or
        none takes work from this process (json-rpc: credentials, TLS).
    """
    rt.rpc.require()


def hand_over(rt: ApiRuntime, record: IntrospectionRecord, cast: Cast) -> None:
    """Cast the step ``record`` is in; when no conductor takes it now, leave
    it for the leader's sweep (see the module's documentation)."""
    try:
        host = cast(rt.rpc, record.uuid, record.version)
    except exceptions.ServiceUnavailable as exc:
        OUTAGE.failed(exc)
        _leave_for_sweep(rt, record, exc.message)
        return
    OUTAGE.ok()
    if rt.rpc.transport == "oslo" and not rt.conf.standalone:
        _note_addressee(rt, record, host)


def _note_addressee(rt: ApiRuntime, record: IntrospectionRecord, host: str) -> None:
    """Say which conductor's queue the cast is in. This API's view of the
    group lags a kill by the membership timeout: a cast made meanwhile sits
    in the dead conductor's queue, and the leader takes its step over as
    soon as the group lost that conductor instead of at the claim deadline.
    (On JSON-RPC the conductor claimed the step before the call returned.)"""
    try:
        claims.handed(rt.db, record.uuid, record.version, host)
    except exceptions.InspectorError as exc:
        # the claim deadline still finds the step if the cast is lost
        LOG.debug("Could not note the conductor of node %s: %s", record.uuid, exc)


def _leave_for_sweep(rt: ApiRuntime, record: IntrospectionRecord, cause: str) -> None:
    try:
        released = claims.release_claim(rt.db, record.uuid, record.version)
    except exceptions.InspectorError as exc:
        # the step keeps its claim deadline: resumed a little later
        LOG.debug("Could not mark node %s for the sweep: %s", record.uuid, exc)
        released = True
    if released:
        LOG.info(
            "The %s step of node %s is stored but no conductor took it now "
            "(%s); the leader conductor resumes it within [coordination]"
            "sweep_interval",
            record.state,
            record.uuid,
            cause,
        )
