"""What the API does for each request, before handing work to a conductor.

Everything a client needs an answer to (does the node exist, may it be
introspected, is the transition allowed, is it locked) is decided here, so
the same error reaches the client whichever shape the service runs in.
"""

import logging
import re
import time
from typing import Any

from inspector import data_store, discovery, exceptions, lookup, states
from inspector.db import introspections, stored_data
from inspector.db.introspections import Introspection
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)

UUID_RE = re.compile(
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I
)
NAME_RE = re.compile(r"^[A-Za-z0-9._~-]{1,255}$")

ALLOWED_PROVISION_STATES = frozenset(
    {"enroll", "manageable", "inspecting", "inspect wait", "inspect failed"}
)
ACTIVE_PROVISION_STATES = frozenset({"active", "rescue"})

STARTING_GRACE = 5.0
"""Seconds a ramdisk post waits for a node still in ``starting`` to reach
``waiting`` (a very fast ramdisk can call back before the power-on returns)."""


def _rpc(rt: Runtime) -> Any:
    if rt.rpc is None:
        raise exceptions.ServiceUnavailable(reason="no conductor is available")
    return rt.rpc


def _hand_over(rt: Runtime, method: str, record: Introspection) -> None:
    """Cast ``method`` for ``record``; if no conductor takes it, end it.

    The state was already written, so leaving it would strand the
    introspection until its timeout: it ends in ``error`` naming the cause
    (an abort ends as aborted), and the client gets the 503 to retry.
    """
    try:
        getattr(_rpc(rt), method)(record.uuid, record.version)
    except exceptions.ServiceUnavailable as exc:
        event = states.ABORT_END if record.state == states.ABORTING else states.FAIL
        prefix = states.ABORTED_MESSAGE if event == states.ABORT_END else "Failed"
        try:
            introspections.transition(
                rt.db,
                record.uuid,
                event,
                claim_within=_claim_within(rt),
                expected_version=record.version,
                error=f"{prefix}: {exc.message}",
            )
        except (exceptions.StaleState, exceptions.InvalidTransition):
            pass  # something else moved it on; it is not stranded
        raise


def validate_node_id(node_id: str, *, names: bool = True) -> None:
    if UUID_RE.match(node_id):
        return
    if names and NAME_RE.match(node_id):
        return
    what = "a UUID or a node name" if names else "a UUID"
    raise exceptions.InvalidInput(
        f"Invalid node identifier {node_id[:64]!r}: expected {what}"
    )


def _claim_within(rt: Runtime) -> float:
    """Seconds a conductor has to pick up a step this API hands over."""
    return float(rt.conf.coordination.claim_timeout)


def resolve(rt: Runtime, node_id: str, *, names: bool = True) -> str:
    """The node UUID for ``node_id``; names are resolved through Ironic."""
    validate_node_id(node_id, names=names)
    if UUID_RE.match(node_id):
        return node_id.lower()
    node = rt.baremetal.get_node(node_id)
    return str(node["uuid"])


def status(rt: Runtime, node_id: str, *, names: bool = True) -> Introspection:
    return introspections.get(rt.db, resolve(rt, node_id, names=names))


def start(rt: Runtime, node_id: str, manage_boot: bool, *, names: bool = True) -> str:
    """Validate and record a new introspection, then cast it to a conductor."""
    validate_node_id(node_id, names=names)
    if manage_boot and not rt.conf.can_manage_boot:
        raise exceptions.InvalidInput(
            "Managed boot is requested, but this installation cannot manage "
            "boot ([DEFAULT]can_manage_boot = False); pass manage_boot=false"
        )
    node = rt.baremetal.get_node(node_id)
    uuid = str(node["uuid"])
    _check_node(rt, node)
    attributes = lookup.from_node(rt.conf, node, rt.baremetal.list_ports(uuid))
    if not any(attributes.values()):
        raise exceptions.InvalidInput(
            f"Node {uuid} has neither ports nor a BMC address in driver_info "
            f"(fields: {', '.join(rt.conf.ipmi_address_fields)}), so the "
            "ramdisk could not be matched to it; create its ports or set a "
            "BMC address first"
        )
    lock = rt.locks.get_lock(uuid)
    if not lock.acquire(blocking=False):
        raise exceptions.NodeLocked(node=uuid)
    try:
        record = introspections.start(
            rt.db, uuid, manage_boot, attributes, claim_within=_claim_within(rt)
        )
    finally:
        lock.release()
    LOG.info("Introspection of node %s recorded (manage_boot=%s)", uuid, manage_boot)
    _hand_over(rt, "start_introspection", record)
    return uuid


def _check_node(rt: Runtime, node: dict[str, Any]) -> None:
    uuid = node["uuid"]
    prov = node.get("provision_state")
    allowed = set(ALLOWED_PROVISION_STATES)
    if rt.conf.processing.permit_active_introspection:
        allowed |= ACTIVE_PROVISION_STATES
    if prov not in allowed:
        raise exceptions.InvalidInput(
            f"Node {uuid} can not be introspected in provision state {prov!r}; "
            f"allowed states: {', '.join(sorted(allowed))}"
        )
    if node.get("maintenance"):
        raise exceptions.InvalidInput(
            f"Node {uuid} is in maintenance mode; take it out of maintenance "
            "before introspection"
        )


def abort(rt: Runtime, node_id: str, *, names: bool = True) -> None:
    uuid = resolve(rt, node_id, names=names)
    lock = rt.locks.get_lock(uuid)
    if not lock.acquire(blocking=False):
        raise exceptions.NodeLocked(node=uuid)
    try:
        record = introspections.get(rt.db, uuid)
        if record.state == states.ERROR:
            # abort is allowed and changes nothing: the node already failed
            return
        record = introspections.transition(
            rt.db,
            uuid,
            states.ABORT,
            claim_within=_claim_within(rt),
            expected_version=record.version,
        )
    finally:
        lock.release()
    LOG.info("Abort of introspection of node %s requested", uuid)
    _hand_over(rt, "abort", record)


def reapply(
    rt: Runtime, node_id: str, data: dict[str, Any] | None, *, names: bool = True
) -> None:
    uuid = resolve(rt, node_id, names=names)
    if data is None and rt.conf.processing.store_data == "none":
        raise exceptions.InvalidInput(
            "Inspector is not configured to store introspection data, so there "
            "is nothing to reapply; set [processing]store_data = database or "
            "post the data in the request body"
        )
    lock = rt.locks.get_lock(uuid)
    if not lock.acquire(blocking=False):
        raise exceptions.NodeLocked(node=uuid)
    try:
        record = introspections.get(rt.db, uuid)
        if data is None and rt.conf.processing.store_data == "directory":
            # kept outside the database: back in for the conductor to read
            data = data_store.for_conf(rt.conf, rt.db).get(uuid, processed=False)
        elif data is None:
            stored_data.get(rt.db, uuid, processed=False)  # 404 when absent
        record = introspections.transition(
            rt.db,
            uuid,
            states.REAPPLY,
            claim_within=_claim_within(rt),
            expected_version=record.version,
            raw_data=data,
        )
    finally:
        lock.release()
    LOG.info("Reapplying stored data of node %s", uuid)
    _hand_over(rt, "reapply", record)


def continue_(rt: Runtime, data: dict[str, Any]) -> str:
    """Accept a ramdisk's data: look the node up, store, hand over to process."""
    attributes = lookup.from_data(data)
    try:
        record = introspections.lookup(rt.db, attributes)
    except exceptions.NoMatch:
        if rt.conf.processing.node_not_found_hook != "enroll":
            raise
        record = discovery.enroll(rt, data, _claim_within(rt))
        _hand_over(rt, "process", record)
        return record.uuid
    deadline = time.monotonic() + STARTING_GRACE
    while record.state == states.STARTING and time.monotonic() < deadline:
        time.sleep(0.05)
        record = introspections.get(rt.db, record.uuid)
    if not states.allows(record.state, states.PROCESS):
        raise exceptions.InvalidTransition(state=record.state, event=states.PROCESS)
    record = introspections.transition(
        rt.db,
        record.uuid,
        states.PROCESS,
        claim_within=_claim_within(rt),
        expected_version=record.version,
        raw_data=data,
    )
    LOG.info("Received ramdisk data for node %s, processing", record.uuid)
    _hand_over(rt, "process", record)
    return record.uuid
