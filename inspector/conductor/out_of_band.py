"""Out-of-band inspection (mode ``out-of-band`` or ``auto``): ask the
node's Redfish BMC (doc/redfish.md), an :class:`~inspector.conductor.inspect.Inspect`.

Under the node's lock, in the start step's worker. The BMC's answer, in
the shape of a ramdisk's inventory, is stored as the introspection's raw
data by the start step (:mod:`inspector.conductor.start`) and goes
through the same processing step (hooks, rules, Ironic writes, the
hardware history) at once, in the same worker. Before that, Ironic ports
are created for the MACs the BMC reported, so the PXE filter knows the
machine even if it is never booted. Nothing powers the machine or
changes its boot device here.

In ``auto``, when the BMC's answer lacks a fact of
``[redfish]required_facts``, the run falls back to the in-band start: the
BMC's data is kept on the record, and the processing merges it with the
ramdisk's (:func:`inspector.redfish.provenance.merge_data`).

The BMC is asked through sushy (:mod:`inspector.redfish.collect`), or,
with ``[redfish]engine = ironic``, by Ironic's own ``redfish`` inspection
(:mod:`inspector.conductor.ironic_inspection`), whose stored inventory
then takes the same path.

A BMC that cannot be asked (unreachable, wrong credentials, garbage, no
such system; Ironic's inspection failed) ends an ``out-of-band``
introspection in ``error`` naming the BMC and the cause, with nothing
written to Ironic. In ``auto`` it is a reason to boot the ramdisk at once
(the cause kept on the record like lacking facts), and asking through
sushy is given up after ``[redfish]auto_budget`` seconds: ``auto`` costs
at most that more than ``in-band``.
"""

import logging
from typing import Any

from inspector import exceptions, faults, states
from inspector.conductor import ironic_inspection
from inspector.conductor.fencing import fence
from inspector.conductor.inspect import Answer, Inspect
from inspector.db.introspections import IntrospectionRecord
from inspector.redfish import collect, credentials, ironic_engine, provenance
from inspector.redfish.sessions import Sessions
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)

PORT_EXTRA = {"created_by": "ironic-inspector", "source": "redfish"}


class Bmc:
    """The node's BMC, asked through sushy or, with ``[redfish]engine =
    ironic``, through Ironic's own ``redfish`` inspection; in mode ``auto``
    a BMC that cannot tell enough boots the ramdisk (``in_band``)."""

    def __init__(self, rt: Runtime, sessions: Sessions, in_band: Inspect) -> None:
        self.rt = rt
        self.sessions = sessions
        self.in_band = in_band

    def inspect(self, record: IntrospectionRecord) -> Answer:
        rt, uuid = self.rt, record.uuid
        node = rt.baremetal.get_node(uuid)
        try:
            data = _ask(rt, self.sessions, record, node)
        except (exceptions.BmcError, exceptions.InvalidInput) as exc:
            if record.mode != states.AUTO:
                raise
            # a BMC that cannot be asked: the ramdisk at once, the cause kept
            LOG.warning(
                "Node %s: %s; booting the ramdisk instead (mode auto)",
                uuid,
                exceptions.first_line(exc),
            )
            return self._fallback(record, _unasked(rt, exc))
        bmc = data["redfish"]["bmc"]
        inventory = data["inventory"]
        lacking = provenance.missing(inventory, rt.conf.redfish.required_facts)
        if record.mode == states.AUTO and lacking:
            LOG.info(
                "Node %s: %s did not give %s; booting the ramdisk for the rest",
                uuid,
                bmc,
                ", ".join(lacking),
            )
            data["redfish"]["lacking"] = lacking
            return self._fallback(record, data)
        if lacking:
            LOG.warning(
                "Node %s: %s did not give %s; processing what it gave",
                uuid,
                bmc,
                ", ".join(lacking),
            )
        fence(rt, record)
        _create_ports(rt, uuid, inventory)
        faults.at("bmc-collected", record.state, uuid)
        return Answer(data=data)

    def _fallback(self, record: IntrospectionRecord, data: dict[str, Any]) -> Answer:
        """``auto`` without enough from the BMC: the in-band start, the
        BMC's data kept on the record (now an in-band run) for the
        processing."""
        self.in_band.inspect(record)
        return Answer(bmc_data=data)


def _ask(
    rt: Runtime,
    sessions: Sessions,
    record: IntrospectionRecord,
    node: dict[str, Any],
) -> dict[str, Any]:
    """What the BMC told, as the data processed like a ramdisk's post:
    through Ironic's own inspection (``[redfish]engine = ironic``), or
    asked through sushy, within ``[redfish]auto_budget`` in mode auto.

    :raises BmcError: the BMC (or Ironic's inspection) could not tell.
    :raises InvalidInput: the node cannot be asked (its driver_info, its
        inspect interface or provision state changed since the start).
    """
    if rt.conf.redfish.engine == ironic_engine.ENGINE:
        return ironic_inspection.ask(rt, record, node)
    creds = credentials.from_node(node)
    LOG.info("Node %s: asking %s (mode %s)", record.uuid, creds.describe(), record.mode)
    if record.mode == states.AUTO:
        budget = float(rt.conf.redfish.auto_budget)
        collected = collect.collect_within(sessions, creds, budget)
    else:
        collected = collect.collect(sessions, creds)
    return collected.data(creds.address)


def _unasked(rt: Runtime, exc: Exception) -> dict[str, Any]:
    """The record of an ``auto`` run whose BMC could not be asked: no
    fact, each required one lacking, and why."""
    reason = exceptions.first_line(exc)
    return {
        "inventory": {},
        provenance.PROVENANCE_KEY: {},
        "redfish": {
            "error": reason,
            "notes": [],
            "lacking": [
                f"{fact} (the BMC could not be asked)"
                for fact in rt.conf.redfish.required_facts
            ],
        },
    }


def _create_ports(rt: Runtime, uuid: str, inventory: dict[str, Any]) -> None:
    """Ironic ports for the MACs the BMC reported that have none yet,
    before anything else (the PXE filter then knows the machine).
    ``pxe_enabled`` is false: Redfish names no boot NIC (as Ironic's own
    ``redfish`` inspection does); the processing's hooks decide the rest."""
    existing = {
        str(p.get("address", "")).lower() for p in rt.baremetal.list_ports(uuid)
    }
    created = 0
    for nic in inventory.get("interfaces") or []:
        mac = nic.get("mac_address")
        if not mac or mac in existing:
            continue
        rt.baremetal.create_port(
            uuid, {"address": mac, "pxe_enabled": False, "extra": dict(PORT_EXTRA)}
        )
        existing.add(mac)
        created += 1
    if created:
        LOG.info("Node %s: %d ports created for the BMC's MACs", uuid, created)
