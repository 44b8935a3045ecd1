"""An operator's requests: start, status, abort and reapply of an
introspection, checked and recorded before the work is handed to a conductor.

Everything a client needs an answer to (does the node exist, may it be
introspected, is the transition allowed, is it locked) is decided here, so
the same error reaches the client whichever shape the service runs in.
"""

import contextlib
import logging
import re
from collections.abc import Iterator
from typing import Any

from inspector import exceptions, states
from inspector.conductor.rpcapi import ConductorClient
from inspector.db import introspections, ramdisk_logs, transitions
from inspector.db.introspections import IntrospectionRecord
from inspector.intake import handover, lookup
from inspector.redfish import credentials, ironic_engine
from inspector.runtime import ApiRuntime, Runtime

LOG = logging.getLogger(__name__)

UUID_RE = re.compile(
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I
)
NAME_RE = re.compile(r"^[A-Za-z0-9._~-]{1,255}$")

ALLOWED_PROVISION_STATES = frozenset(
    {"enroll", "manageable", "inspecting", "inspect wait", "inspect failed"}
)
ACTIVE_PROVISION_STATES = frozenset({"active", "rescue"})

LOCK_GRACE = 2.0
"""Seconds a start, an abort or a reapply waits for the node's lock: work
that is just finishing (its state already says so: ``waiting``,
``finished``) lets go within this; work that is really running does not,
and the request gets 409."""


def validate_node_id(node_id: str, *, names: bool = True) -> None:
    if UUID_RE.match(node_id):
        return
    if names and NAME_RE.match(node_id):
        return
    what = "a UUID or a node name" if names else "a UUID"
    raise exceptions.InvalidInput(
        f"Invalid node identifier {node_id[:64]!r}: expected {what}"
    )


def resolve(rt: Runtime, node_id: str, *, names: bool = True) -> str:
    """The node UUID for ``node_id``; names are resolved through Ironic."""
    validate_node_id(node_id, names=names)
    if UUID_RE.match(node_id):
        return node_id.lower()
    node = rt.baremetal.get_node(node_id)
    return str(node["uuid"])


def status(rt: Runtime, node_id: str, *, names: bool = True) -> IntrospectionRecord:
    return introspections.get(rt.db, resolve(rt, node_id, names=names))


def start(
    rt: ApiRuntime,
    node_id: str,
    manage_boot: bool,
    *,
    names: bool = True,
    mode: str | None = None,
) -> str:
    """Validate and record a new introspection, then cast it to a conductor.

    ``mode`` (API 1.26; by default ``[DEFAULT]introspection_mode``) says
    how the hardware is learnt: see :func:`_mode_of`.
    """
    validate_node_id(node_id, names=names)
    if mode is None:
        mode = str(rt.conf.introspection_mode)
    if manage_boot and not rt.conf.can_manage_boot and mode != states.OUT_OF_BAND:
        raise exceptions.InvalidInput(
            "Managed boot is requested, but this installation cannot manage "
            "boot ([DEFAULT]can_manage_boot = False); pass manage_boot=false"
        )
    node = rt.baremetal.get_node(node_id)
    uuid = str(node["uuid"])
    _check_node(rt, node)
    mode = _mode_of(node, mode, str(rt.conf.redfish.engine))
    ports = rt.baremetal.list_ports(uuid)
    attributes = lookup.from_node(rt.conf, node, ports)
    if not any(attributes.values()) and mode == states.IN_BAND:
        raise exceptions.InvalidInput(
            f"Node {uuid} has neither ports nor a BMC address in driver_info "
            f"(fields: {', '.join(rt.conf.ipmi_address_fields)}), so the "
            "ramdisk could not be matched to it; create its ports or set a "
            "BMC address first"
        )
    handover.require_conductor(rt)
    with _node_locked(rt, uuid):
        record = introspections.start(
            rt.db,
            uuid,
            manage_boot,
            attributes,
            claim_within=handover.claim_within(rt),
            ports=ports,
            mode=mode,
        )
    LOG.info(
        "Introspection of node %s recorded (manage_boot=%s, mode %s)",
        f"{uuid} ({node['name']})" if node.get("name") else uuid,
        manage_boot,
        mode,
    )
    handover.hand_over(rt, record, ConductorClient.start_introspection)
    return uuid


def _mode_of(node: dict[str, Any], mode: str, engine: str) -> str:
    """The mode a start of ``node`` asked for ``mode`` runs in.

    Out of band, a node without Redfish driver_info is refused; in
    ``auto`` it goes straight in-band. A password Ironic masks is refused
    in both (the message names Ironic's policy that unmasks it). With
    ``[redfish]engine = ironic`` the password stays in Ironic: what is
    refused (or, in ``auto``, sent in-band) is a node Ironic cannot run
    its redfish inspection on (its inspect interface, its provision state).
    """
    if mode == states.IN_BAND:
        return mode
    if engine == ironic_engine.ENGINE:
        problem = ironic_engine.refusal(node)
        if problem is None:
            return mode
        if mode == states.AUTO:
            LOG.info("Mode auto goes in-band: %s", problem)
            return states.IN_BAND
        raise exceptions.InvalidInput(problem)
    if mode == states.AUTO and not credentials.has_redfish(node):
        LOG.info(
            "Node %s has no Redfish driver_info: mode auto goes in-band",
            node.get("uuid"),
        )
        return states.IN_BAND
    credentials.from_node(node)  # the 400s
    return mode


@contextlib.contextmanager
def _node_locked(rt: Runtime, uuid: str) -> Iterator[None]:
    """Hold the node's lock, waiting up to LOCK_GRACE; else 409."""
    lock = rt.locks.get_lock(uuid)
    if not lock.acquire(timeout=LOCK_GRACE):
        raise exceptions.NodeLocked(node=uuid)
    try:
        yield
    finally:
        lock.release()


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


def abort(rt: ApiRuntime, node_id: str, *, names: bool = True) -> None:
    uuid = resolve(rt, node_id, names=names)
    with _node_locked(rt, uuid):
        record = introspections.get(rt.db, uuid)
        if record.state == states.ERROR:
            # abort is allowed and changes nothing: the node already failed
            return
        states.next_state(record.state, states.ABORT)  # 400 before 503
        handover.require_conductor(rt)
        record = transitions.abort_requested(
            rt.db, record, claim_within=handover.claim_within(rt)
        )
    LOG.info("Abort of introspection of node %s requested", uuid)
    handover.hand_over(rt, record, ConductorClient.abort)


def reapply(
    rt: ApiRuntime, node_id: str, data: dict[str, Any] | None, *, names: bool = True
) -> None:
    uuid = resolve(rt, node_id, names=names)
    store = rt.stores.current()
    if data is None:
        store.check_reapply()
    else:
        # a reapply is no boot of the ramdisk: its logs are never written
        ramdisk_logs.take(data)
    with _node_locked(rt, uuid):
        record = introspections.get(rt.db, uuid)
        if data is None:
            # the raw data goes back in the database for the conductor to read
            data = store.for_reapply(uuid)
        states.next_state(record.state, states.REAPPLY)  # 400 before 503
        handover.require_conductor(rt)
        record = transitions.reapply_requested(
            rt.db, record, data, claim_within=handover.claim_within(rt)
        )
    LOG.info("Reapplying stored data of node %s", uuid)
    handover.hand_over(rt, record, ConductorClient.reapply)
