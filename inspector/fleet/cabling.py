"""The cabling view: every NIC's switch link from the nodes' latest runs,
and what looks wrong in it."""

import collections
from collections.abc import Iterable, Sequence
from typing import Any

from inspector.fleet.expected import CablingRule


def view(
    nodes: Iterable[dict[str, Any]], rules: Sequence[CablingRule] = ()
) -> dict[str, Any]:
    """``{"links", "problems"}`` of ``nodes`` (``{"uuid", "name", "links"}``,
    ``links`` the shared design's entries: mac, name, pxe, switch_id,
    switch_name, port_id).

    ``links`` holds each NIC seen on a switch (with LLDP data); the
    problems, each ``{"kind", "detail", "nodes"}``:

    - ``duplicate-port``: more than one MAC on one switch port (chassis id
      plus port id);
    - ``no-neighbour``: the NIC a node booted from has no LLDP data;
    - ``unexpected``: a NIC that an expected-cabling rule names is not
      where the rule says (or has no LLDP data, or the node lacks it).
    """
    nodes = list(nodes)
    links = []
    problems: list[dict[str, Any]] = []
    ports: dict[tuple[str, str], list[tuple[str, dict[str, Any]]]] = (
        collections.defaultdict(list)
    )
    for node in nodes:
        for nic in node["links"]:
            if nic.get("switch_id") is None and nic.get("port_id") is None:
                if nic.get("pxe"):
                    problems.append(
                        {
                            "kind": "no-neighbour",
                            "detail": f"the PXE NIC {describe_nic(nic)} of "
                            f"{describe_node(node)} has no LLDP data (no switch "
                            "seen)",
                            "nodes": [node["uuid"]],
                        }
                    )
                continue
            links.append(
                {
                    "switch_id": nic.get("switch_id"),
                    "switch_name": nic.get("switch_name"),
                    "port_id": nic.get("port_id"),
                    "node": node["uuid"],
                    "node_name": node.get("name"),
                    "mac": nic.get("mac"),
                    "nic": nic.get("name"),
                }
            )
            if nic.get("switch_id") is not None and nic.get("port_id") is not None:
                ports[(nic["switch_id"], nic["port_id"])].append((node["uuid"], nic))
    crowded = sorted(item for item in ports.items() if len(item[1]) > 1)
    for (switch_id, port_id), seen in crowded:
        macs = sorted({nic.get("mac") or "" for _uuid, nic in seen})
        if len(macs) > 1:
            name = seen[0][1].get("switch_name")
            switch = f"{switch_id} ({name})" if name else switch_id
            problems.append(
                {
                    "kind": "duplicate-port",
                    "detail": f"{len(macs)} MACs on switch {switch} port "
                    f"{port_id}: {', '.join(macs)}",
                    "nodes": sorted({uuid for uuid, _nic in seen}),
                }
            )
    if rules:
        problems.extend(unexpected(nodes, rules))
    links.sort(key=lambda k: (k["switch_id"] or "", k["port_id"] or "", k["node"]))
    return {"links": links, "problems": problems}


def describe_nic(nic: dict[str, Any]) -> str:
    """A NIC as a problem's detail names it: its name and MAC."""
    name = nic.get("name")
    return f"{name} ({nic.get('mac')})" if name else str(nic.get("mac"))


def describe_node(node: dict[str, Any]) -> str:
    """A node as a problem's detail names it: its name and UUID."""
    name = node.get("name")
    return f"node {name} ({node['uuid']})" if name else f"node {node['uuid']}"


def unexpected(
    nodes: list[dict[str, Any]], rules: Sequence[CablingRule]
) -> list[dict[str, Any]]:
    """The ``unexpected`` problems of ``nodes`` against ``rules``, node
    by node."""
    problems = []
    for node in nodes:
        ruled = [r for r in rules if r.matches_node(node["uuid"], node.get("name"))]
        if not ruled:
            continue
        decided: set[int] = set()
        for rule in ruled:
            nics = [
                n
                for n in node["links"]
                if rule.matches_nic(n.get("mac") or "", n.get("name"))
            ]
            if not nics:
                if not any(r.nic == rule.nic for r in ruled if r.line < rule.line):
                    problems.append(_problem(node, rule, f"has no NIC {rule.nic}"))
                continue
            for nic in nics:
                if id(nic) in decided:
                    continue
                decided.add(id(nic))
                if nic.get("switch_id") is None and nic.get("port_id") is None:
                    seen = "no LLDP data"
                elif rule.switch_ok(nic.get("switch_id"), nic.get("switch_name")) and (
                    rule.port_ok(nic.get("port_id"))
                ):
                    continue
                else:
                    seen = (
                        f"switch {nic.get('switch_name') or nic.get('switch_id')} "
                        f"port {nic.get('port_id')}"
                    )
                problems.append(
                    _problem(
                        node,
                        rule,
                        f"NIC {describe_nic(nic)}: expected switch {rule.switch} port "
                        f"{rule.port}, seen {seen}",
                    )
                )
    return problems


def _problem(node: dict[str, Any], rule: CablingRule, what: str) -> dict[str, Any]:
    return {
        "kind": "unexpected",
        "detail": f"{describe_node(node)} {what} (expected cabling line {rule.line})",
        "nodes": [node["uuid"]],
    }
