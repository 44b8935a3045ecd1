"""One inspection of Ironic's as a run of the hardware history: Ironic's
stored inventory and plugin data read as the ramdisk's processed data, a
record made of them and compared with the node's previous record,
whatever made it. No I/O but the previous record's read."""

import logging
from typing import Any

from inspector import exceptions, metrics
from inspector.db import hardware_runs, introspections
from inspector.db.engine import Database
from inspector.history import diff
from inspector.history import record as hardware_record
from inspector.hooks import root_disk

LOG = logging.getLogger(__name__)


def as_processed(inventory: Any, plugin_data: Any) -> dict[str, Any]:
    """Ironic's ``inventory`` and ``plugin_data`` in the shape the record
    reads: the inventory under ``inventory``, the plugin data's keys beside
    it (``root_disk``, ``boot_interface``, ``all_interfaces``...), and the
    LLDP Ironic's ``parse-lldp`` hook decoded (``parsed_lldp``, by NIC
    name) where the ramdisk's ``lldp_basic`` leaves it.

    :raises InvalidInput: ``inventory`` is not an IPA inventory.
    """
    if not isinstance(inventory, dict) or not isinstance(
        inventory.get("interfaces", []), list
    ):
        raise exceptions.InvalidInput("the inventory is not a JSON object")
    known = ("cpu", "memory", "disks", "interfaces", "system_vendor")
    if not any(key in inventory for key in known):
        raise exceptions.InvalidInput(
            "the inventory is not an ironic-python-agent inventory (none of "
            + ", ".join(known)
            + ")"
        )
    plugin = plugin_data if isinstance(plugin_data, dict) else {}
    data: dict[str, Any] = {
        key: value for key, value in plugin.items() if key != "inventory"
    }
    data["inventory"] = inventory
    if not isinstance(data.get("root_disk"), dict):
        # Ironic's default hooks choose none (its root-device hook does):
        # the one our root disk hook chooses without hints
        chosen = root_disk.without_hints(inventory.get("disks") or [])
        if chosen is not None:
            data["root_disk"] = chosen
    parsed = plugin.get("parsed_lldp")
    if isinstance(parsed, dict):
        interfaces = data.get("all_interfaces")
        interfaces = dict(interfaces) if isinstance(interfaces, dict) else {}
        for name, fields in parsed.items():
            if isinstance(fields, dict):
                entry = interfaces.get(name)
                entry = dict(entry) if isinstance(entry, dict) else {}
                entry["lldp_processed"] = fields
                interfaces[name] = entry
        data["all_interfaces"] = interfaces
    return data


def previous_record(db: Database, node_uuid: str) -> tuple[str | None, Any]:
    """The node's latest run with a record and that record (None, None
    when it has none)."""
    try:
        latest = introspections.get(db, node_uuid).hardware_run
    except exceptions.IntrospectionNotFound:
        return None, None
    if latest is None:
        return None, None
    return latest, hardware_runs.get_record(db, latest)


def run_of(
    db: Database,
    node: dict[str, Any],
    data: dict[str, Any],
    source: str,
    interface: str | None,
) -> hardware_runs.Run:
    """A new run of ``node`` (``uuid``, ``name``) from processed ``data``,
    with its changes against the node's previous record."""
    uuid = node["uuid"]
    summary = hardware_record.summarise(data)
    previous_run, previous = previous_record(db, uuid)
    changes = diff.changes(previous, summary.record)
    run = hardware_runs.new_run(uuid)
    run.node_name = node.get("name")
    run.record = summary.record
    run.facts = summary.facts
    run.links = summary.links
    run.changes = changes
    run.change_count = diff.changed_components(changes)
    run.source = source
    run.interface = interface
    for change in changes:
        metrics.HARDWARE_CHANGES.labels(change["kind"]).inc()
    if changes:
        LOG.info(
            "Node %s (%s): %d hardware changes in %d components since run %s "
            "(inspected by %s)",
            uuid,
            run.node_name or "no name",
            len(changes),
            run.change_count,
            previous_run,
            source if interface is None else f"{source}, {interface}",
        )
    return run
