"""``[redfish]engine = ironic``, the asking part of the out-of-band start
step (:mod:`inspector.conductor.out_of_band`): Ironic's ``inspect``
action on a node whose inspect interface is ``redfish``, the wait for its
end, and the inventory Ironic stored (``GET /v1/nodes/<node>/inventory``,
API 1.81). The password never leaves Ironic.

The wait polls Ironic in the start step's worker, under the node's lock,
from every 0.5 s up to every 5 s, for at most ``[redfish]ironic_timeout``
(Ironic's redfish inspection itself takes seconds: it is synchronous in
Ironic's conductor). Each poll fences, so an abort or a takeover stops it.
A step resumed while Ironic still inspects the node (a conductor lost
during the wait) waits again instead of asking a second time.
"""

import logging
import time
from typing import Any

from inspector import exceptions
from inspector.conductor.fencing import fence
from inspector.db import followed
from inspector.db.introspections import IntrospectionRecord
from inspector.follow import poller
from inspector.redfish import ironic_engine
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)

FIRST_POLL = 0.5
LAST_POLL = 5.0

clock = time.monotonic
sleep = time.sleep
"""Replaced by the unit tests (no test sleeps)."""


def ask(
    rt: Runtime, record: IntrospectionRecord, node: dict[str, Any]
) -> dict[str, Any]:
    """Ironic's inspection of ``node`` as the data a BMC's answer gives.

    :raises InvalidInput: Ironic cannot run it (the inspect interface is
        not ``redfish``, a provision state it does not inspect from).
    :raises BmcError: Ironic's inspection failed (its ``last_error``).
    :raises InspectorError: it did not end within
        ``[redfish]ironic_timeout`` (the node is still Ironic's).
    """
    uuid = record.uuid
    bmc = ironic_engine.describe(node)
    if node.get("provision_state") in ironic_engine.BUSY_STATES:
        LOG.info("Node %s: Ironic is already inspecting it; waiting", uuid)
    else:
        problem = ironic_engine.refusal(node)
        if problem is not None:
            raise exceptions.InvalidInput(problem)
        fence(rt, record)
        rt.baremetal.set_provision_state(uuid, "inspect")
        LOG.info("Node %s: Ironic's redfish inspection started", uuid)
    node = _wait(rt, record, bmc)
    state = node.get("provision_state")
    if state == ironic_engine.FAILED_STATE:
        raise exceptions.BmcError(
            bmc=bmc,
            reason="Ironic's inspection failed: "
            f"{node.get('last_error') or 'Ironic gave no reason'}",
        )
    if state not in ironic_engine.INSPECTABLE_STATES:
        raise exceptions.BmcError(
            bmc=bmc, reason=f"Ironic's inspection ended in provision state {state!r}"
        )
    found = ironic_engine.data(rt.baremetal.get_inventory(uuid), bmc)
    _ours(rt, node)
    return found


def _ours(rt: Runtime, node: dict[str, Any]) -> None:
    """Ironic's inspection just read is this introspection's: marked seen,
    so following Ironic's inspections ([ironic_follow]) does not record it
    a second time as Ironic's own."""
    inspection = poller.inspection_of(node)
    if inspection is None or not rt.conf.ironic_follow.enabled:
        return
    try:
        followed.skip(rt.db, inspection)
    except exceptions.DatabaseUnavailable as exc:
        LOG.debug("Node %s: its inspection not marked as ours: %s", node, exc)


def _wait(rt: Runtime, record: IntrospectionRecord, bmc: str) -> dict[str, Any]:
    """The node once Ironic's inspection has ended."""
    limit = float(rt.conf.redfish.ironic_timeout)
    deadline = clock() + limit
    interval = FIRST_POLL
    while True:
        sleep(interval)
        fence(rt, record)
        node = rt.baremetal.get_node(record.uuid)
        if node.get("provision_state") not in ironic_engine.BUSY_STATES:
            return node
        if clock() >= deadline:
            # not a BmcError: the node is still Ironic's, so mode auto
            # cannot boot the ramdisk either
            raise exceptions.InspectorError(
                f"{bmc}: Ironic was still inspecting the node after "
                f"[redfish]ironic_timeout ({limit:g} s)"
            )
        interval = min(interval * 1.5, LAST_POLL)
