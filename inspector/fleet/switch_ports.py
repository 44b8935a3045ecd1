"""The cabling view kept up to date as nodes come, change and go: the
same answer as :func:`inspector.fleet.cabling.view` over every node, but
a changed node costs the work of its own NICs and of the switch ports
they were and are on.

Kept: every link in the view's order (switch, port, node, NIC) with its
JSON, the ``no-neighbour`` and ``unexpected`` problems of each node (a
node's own), and per switch port the NICs seen on it, whose
``duplicate-port`` problem is found again only when one of them changed.
"""

import bisect
import json
from collections.abc import Sequence
from typing import Any

from inspector.fleet import cabling
from inspector.fleet.expected import CablingRule

LinkKey = tuple[str, str, str, int]
"""Where a link sorts: switch id, port id, node UUID, the NIC's index."""
Port = tuple[str, str]
"""A switch port: the switch's chassis id and the port id."""


class _Sorted:
    """Values by key, kept in key order in a list: one change costs a
    bisection and a move of the entries after it (a copy of pointers),
    and the values in order are a copy of that list."""

    def __init__(self) -> None:
        self.keys: list[Any] = []
        self.values: list[Any] = []

    def set(self, key: Any, value: Any) -> None:
        index = bisect.bisect_left(self.keys, key)
        if index < len(self.keys) and self.keys[index] == key:
            self.values[index] = value
        else:
            self.keys.insert(index, key)
            self.values.insert(index, value)

    def pop(self, key: Any) -> None:
        index = bisect.bisect_left(self.keys, key)
        if index < len(self.keys) and self.keys[index] == key:
            del self.keys[index]
            del self.values[index]

    def ordered(self) -> list[Any]:
        return list(self.values)

    def __len__(self) -> int:
        return len(self.keys)


class SwitchPorts:
    """The cabling of a changing set of nodes (each the fleet view's
    ``{"uuid", "name", "links"}``) against the expected-cabling ``rules``.

    Not thread-safe: the caller serialises every call. Nodes are never
    changed in place: :meth:`put` a new dict.
    """

    def __init__(self, rules: Sequence[CablingRule] = ()) -> None:
        self.rules = tuple(rules)
        self._nodes: dict[str, dict[str, Any]] = {}
        self._links = _Sorted()
        """Each link's dict, by :data:`LinkKey`."""
        self._texts = _Sorted()
        """Each link's JSON, by :data:`LinkKey`."""
        self._silent = _Sorted()
        """A node's ``no-neighbour`` problems, by UUID."""
        self._unexpected = _Sorted()
        """A node's ``unexpected`` problems, by UUID."""
        self._ports: dict[Port, dict[tuple[str, int], dict[str, Any]]] = {}
        """The NICs on each switch port, by (node UUID, NIC index)."""
        self._crowded = _Sorted()
        """The ``duplicate-port`` problem of a port, by port."""
        self._dirty: set[Port] = set()

    def put(self, node: dict[str, Any]) -> None:
        """Add ``node``, or replace the node of its UUID."""
        uuid = node["uuid"]
        self.drop(uuid)
        self._nodes[uuid] = node
        silent = []
        for index, nic in enumerate(node["links"]):
            if nic.get("switch_id") is None and nic.get("port_id") is None:
                if nic.get("pxe"):
                    silent.append(
                        {
                            "kind": "no-neighbour",
                            "detail": f"the PXE NIC {cabling.describe_nic(nic)} of "
                            f"{cabling.describe_node(node)} has no LLDP data (no "
                            "switch seen)",
                            "nodes": [uuid],
                        }
                    )
                continue
            link = {
                "switch_id": nic.get("switch_id"),
                "switch_name": nic.get("switch_name"),
                "port_id": nic.get("port_id"),
                "node": uuid,
                "node_name": node.get("name"),
                "mac": nic.get("mac"),
                "nic": nic.get("name"),
            }
            key = (nic.get("switch_id") or "", nic.get("port_id") or "", uuid, index)
            self._links.set(key, link)
            self._texts.set(key, json.dumps(link))
            if nic.get("switch_id") is not None and nic.get("port_id") is not None:
                port = (nic["switch_id"], nic["port_id"])
                self._ports.setdefault(port, {})[(uuid, index)] = nic
                self._dirty.add(port)
        if silent:
            self._silent.set(uuid, silent)
        if self.rules:
            unexpected = cabling.unexpected([node], self.rules)
            if unexpected:
                self._unexpected.set(uuid, unexpected)

    def drop(self, uuid: str) -> None:
        """Forget the node ``uuid`` (nothing if unknown)."""
        node = self._nodes.pop(uuid, None)
        if node is None:
            return
        for index, nic in enumerate(node["links"]):
            if nic.get("switch_id") is None and nic.get("port_id") is None:
                continue
            key = (nic.get("switch_id") or "", nic.get("port_id") or "", uuid, index)
            self._links.pop(key)
            self._texts.pop(key)
            if nic.get("switch_id") is not None and nic.get("port_id") is not None:
                port = (nic["switch_id"], nic["port_id"])
                seen = self._ports[port]
                del seen[(uuid, index)]
                if not seen:
                    del self._ports[port]
                self._dirty.add(port)
        self._silent.pop(uuid)
        self._unexpected.pop(uuid)

    @property
    def links_count(self) -> int:
        return len(self._links)

    def problems(self) -> list[dict[str, Any]]:
        """The view's ``problems`` (the dicts are shared: do not change
        them)."""
        self._flush()
        found = [p for problems in self._silent.ordered() for p in problems]
        found.extend(self._crowded.ordered())
        found.extend(p for problems in self._unexpected.ordered() for p in problems)
        return found

    def view(self) -> dict[str, Any]:
        """What :func:`inspector.fleet.cabling.view` answers over the
        nodes held (the dicts are shared: do not change them)."""
        problems = self.problems()
        return {
            "links": self._links.ordered(),
            "problems": problems,
        }

    def json(self) -> str:
        """:meth:`view` as ``json.dumps`` writes it (keys in their order,
        ASCII), from each link's JSON kept since it was put: the links
        of 10,000 nodes are a megabyte, not written again at each change."""
        links = ", ".join(self._texts.values)
        return f'{{"links": [{links}], "problems": {json.dumps(self.problems())}}}'

    def _flush(self) -> None:
        for port in self._dirty:
            seen = self._ports.get(port)
            self._crowded.pop(port)
            if seen is None or len(seen) < 2:
                continue
            nics = [seen[k] for k in sorted(seen)]
            macs = sorted({nic.get("mac") or "" for nic in nics})
            if len(macs) < 2:
                continue
            switch_id, port_id = port
            name = nics[0].get("switch_name")
            switch = f"{switch_id} ({name})" if name else switch_id
            self._crowded.set(
                port,
                {
                    "kind": "duplicate-port",
                    "detail": f"{len(macs)} MACs on switch {switch} port "
                    f"{port_id}: {', '.join(macs)}",
                    "nodes": sorted({uuid for uuid, _index in seen}),
                },
            )
        self._dirty.clear()
