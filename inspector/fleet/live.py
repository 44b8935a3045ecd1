"""The fleet view held in memory and kept up to date by the runs that
changed it: the nodes by UUID, and beside them what the endpoints and
the page ask of them (the counts per fact, the outliers, the cabling),
each changed by the work of what changed, never by a pass over the
fleet. Answers are those of the pure modules over every node
(:mod:`inspector.fleet.queries`, :mod:`inspector.fleet.outliers`,
:mod:`inspector.fleet.cabling`).
"""

import bisect
from collections.abc import Sequence
from typing import Any

from inspector.fleet import queries
from inspector.fleet.expected import CablingRule
from inspector.fleet.peer_groups import PeerGroups
from inspector.fleet.switch_ports import SwitchPorts
from inspector.fleet.tally import FactTally


class LiveFleet:
    """Each node's ``(facts, links)`` as the fleet view reads them
    (``{"uuid", ...facts}`` and ``{"uuid", "name", "links"}``).

    Not thread-safe: the caller serialises every call. What it hands out
    (lists, and the dicts in them) is shared and never changed afterwards:
    a change replaces a node's dicts.
    """

    def __init__(self) -> None:
        self._nodes: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        self._uuids: list[str] = []
        self._ordered: list[dict[str, Any]] = []
        """Each node's facts, in the order of ``_uuids``."""
        self._tally = FactTally()
        self._peers: PeerGroups | None = None
        self._ports: SwitchPorts | None = None
        self._facts: list[dict[str, Any]] | None = None
        self.version = 0
        """Counts the changes: an answer computed at one version holds
        while it is the same."""

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, uuid: object) -> bool:
        return uuid in self._nodes

    def uuids(self) -> list[str]:
        """The nodes held, by UUID (a copy)."""
        return list(self._uuids)

    def get(self, uuid: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
        return self._nodes.get(uuid)

    def put(self, node_facts: dict[str, Any], links: dict[str, Any]) -> bool:
        """Hold ``node_facts`` and ``links`` for their node; False when
        they are what was held (nothing changed)."""
        uuid = node_facts["uuid"]
        held = self._nodes.get(uuid)
        if held is not None:
            if held == (node_facts, links):
                return False
            self._tally.remove(held[0])
            self._ordered[bisect.bisect_left(self._uuids, uuid)] = node_facts
        else:
            index = bisect.bisect_left(self._uuids, uuid)
            self._uuids.insert(index, uuid)
            self._ordered.insert(index, node_facts)
        self._nodes[uuid] = (node_facts, links)
        self._tally.add(node_facts)
        if self._peers is not None:
            self._peers.put(node_facts)
        if self._ports is not None:
            self._ports.put(links)
        self._changed()
        return True

    def drop(self, uuid: str) -> bool:
        """Forget the node ``uuid``; False when it was not held."""
        held = self._nodes.pop(uuid, None)
        if held is None:
            return False
        index = bisect.bisect_left(self._uuids, uuid)
        del self._uuids[index]
        del self._ordered[index]
        self._tally.remove(held[0])
        if self._peers is not None:
            self._peers.drop(uuid)
        if self._ports is not None:
            self._ports.drop(uuid)
        self._changed()
        return True

    def _changed(self) -> None:
        self.version += 1
        self._facts = None

    def facts(self) -> list[dict[str, Any]]:
        """Every node's facts, by UUID (shared: do not change it)."""
        if self._facts is None:
            self._facts = list(self._ordered)  # a copy of pointers
        return self._facts

    def summary(self, group_by: str) -> list[dict[str, Any]]:
        """:func:`inspector.fleet.queries.summary` without filters.

        :raises InvalidInput: an unknown fact.
        """
        found = self._tally.summary(group_by)
        if found is None:
            return queries.summary(self.facts(), group_by)
        return found

    def products(self) -> list[tuple[tuple[Any, Any], int]]:
        """``[((vendor, product), count)]``, the most common first."""
        return self._tally.products()

    def peer_groups(
        self, peer_facts: Sequence[str], min_peers: int, share: float
    ) -> PeerGroups:
        """The outliers as these options define them (built over every
        node when the options differ from the last call's)."""
        peers = self._peers
        if peers is None or (peers.peer_facts, peers.min_peers, peers.share) != (
            tuple(peer_facts),
            min_peers,
            share,
        ):
            peers = self._peers = PeerGroups(peer_facts, min_peers, share)
            for node_facts, _links in self._nodes.values():
                peers.put(node_facts)
        return peers

    def switch_ports(self, rules: Sequence[CablingRule]) -> SwitchPorts:
        """The cabling against ``rules`` (built over every node when the
        rules differ from the last call's)."""
        ports = self._ports
        if ports is None or ports.rules != tuple(rules):
            ports = self._ports = SwitchPorts(rules)
            for _facts, links in self._nodes.values():
                ports.put(links)
        return ports
