"""numa_topology: the NUMA nodes the ramdisk reported, with their CPUs,
memory and NICs."""

import logging
from typing import Any

from inspector.hooks.base import Data, NodeContext, ProcessingHook

LOG = logging.getLogger(__name__)


def _int(value: Any) -> int | None:
    return (
        value
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0
        else None
    )


def _macs(data: Data) -> dict[str, str]:
    inventory = data.get("inventory")
    interfaces = inventory.get("interfaces") if isinstance(inventory, dict) else None
    return (
        {
            str(i["name"]): str(i.get("mac_address") or "").lower() or ""
            for i in interfaces
            if isinstance(i, dict) and i.get("name")
        }
        if isinstance(interfaces, list)
        else {}
    )


def build(topology: Any, macs: dict[str, str]) -> tuple[list[dict[str, Any]], int]:
    """(NUMA nodes, entries skipped as malformed)."""
    nodes: dict[int, dict[str, Any]] = {}
    skipped = 0

    def node(number: Any) -> dict[str, Any] | None:
        index = _int(number)
        if index is None:
            return None
        return nodes.setdefault(
            index,
            {
                "numa_node": index,
                "memory_mb": 0,
                "cpus": [],
                "thread_siblings": [],
                "nics": [],
            },
        )

    sections = topology if isinstance(topology, dict) else {}
    for ram in sections.get("ram") or []:
        target = node(ram.get("numa_node")) if isinstance(ram, dict) else None
        size = _int(ram.get("size_kb")) if isinstance(ram, dict) else None
        if target is None or size is None:
            skipped += 1
            continue
        target["memory_mb"] += size // 1024
    for cpu in sections.get("cpus") or []:
        target = node(cpu.get("numa_node")) if isinstance(cpu, dict) else None
        number = _int(cpu.get("cpu")) if isinstance(cpu, dict) else None
        siblings = cpu.get("thread_siblings") if isinstance(cpu, dict) else None
        if target is None or number is None:
            skipped += 1
            continue
        target["cpus"].append(number)
        if isinstance(siblings, list) and all(_int(s) is not None for s in siblings):
            group = sorted(siblings)
            if group not in target["thread_siblings"]:
                target["thread_siblings"].append(group)
    for nic in sections.get("nics") or []:
        target = node(nic.get("numa_node")) if isinstance(nic, dict) else None
        name = nic.get("name") if isinstance(nic, dict) else None
        if target is None or not isinstance(name, str):
            skipped += 1
            continue
        target["nics"].append({"name": name, "mac": macs.get(name) or None})
    for value in nodes.values():
        value["cpus"].sort()
        value["thread_siblings"].sort()
    return [nodes[i] for i in sorted(nodes)], skipped


class NumaTopologyHook(ProcessingHook):
    """Reads ``numa_topology`` (ironic-python-agent's numa-topology collector:
    ``ram``, ``cpus``, ``nics`` with their ``numa_node``) and the inventory's
    NICs; writes ``numa_nodes`` in the data: per NUMA node its memory_mb,
    CPU ids, thread sibling groups and NICs (name and MAC), and the node
    property ``numa_nodes`` (their count; an existing value only with
    ``overwrite_existing``). Malformed entries are skipped with a warning."""

    def before_processing(self, data: Data) -> None:
        if "numa_topology" not in data:
            return
        nodes, skipped = build(data["numa_topology"], _macs(data))
        if skipped:
            LOG.warning("Skipped %d malformed NUMA topology entries", skipped)
        data["numa_nodes"] = nodes

    def before_update(self, data: Data, ctx: NodeContext) -> None:
        nodes = data.get("numa_nodes") or []
        if not nodes:
            return
        if self.conf.processing.overwrite_existing or ctx.properties.get(
            "numa_nodes"
        ) in (None, "", 0):
            ctx.patch("/properties/numa_nodes", len(nodes))
