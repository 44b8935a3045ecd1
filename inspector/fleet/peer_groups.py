"""The outliers kept up to date as nodes come, change and go: the same
answer as :func:`inspector.fleet.outliers.find` over every node, but a
changed node costs the work of its peer group(s), not of the fleet.

Each group (the nodes sharing the values of the peer facts) keeps, per
compared fact, how many members have each value and which members those
are; when a group's members change, its outliers are found again from
those counts (a few values per fact) and swapped into the fleet's list,
which is kept ordered by node UUID and fact.
"""

import bisect
import collections
from collections.abc import Sequence
from typing import Any

from inspector.fleet import outliers, queries

Key = tuple[Any, ...]


class _Group:
    def __init__(self, compared: Sequence[str]) -> None:
        self.members: dict[str, dict[str, Any]] = {}
        self.counts: dict[str, collections.Counter[Any]] = {
            fact: collections.Counter() for fact in compared
        }
        self.holders: dict[str, dict[Any, set[str]]] = {
            fact: collections.defaultdict(set) for fact in compared
        }
        self.found: list[tuple[str, str]] = []
        """The (uuid, fact) of its outliers, as last found."""

    def add(self, node: dict[str, Any]) -> None:
        uuid = node["uuid"]
        self.members[uuid] = node
        for fact, counts in self.counts.items():
            value = node.get(fact)
            counts[value] += 1
            self.holders[fact][value].add(uuid)

    def remove(self, uuid: str) -> None:
        node = self.members.pop(uuid)
        for fact, counts in self.counts.items():
            value = node.get(fact)
            counts[value] -= 1
            if not counts[value]:
                del counts[value]
                del self.holders[fact][value]
            else:
                self.holders[fact][value].discard(uuid)


class PeerGroups:
    """The outliers of a changing set of nodes (each the fleet view's
    ``{"uuid", ...facts}``), with ``peer_facts``, ``min_peers`` and
    ``share`` as :func:`inspector.fleet.outliers.find` takes them.

    Not thread-safe: the caller serialises :meth:`put`, :meth:`drop` and
    :meth:`outliers`. Nodes are never changed in place: :meth:`put` a new
    dict.
    """

    def __init__(self, peer_facts: Sequence[str], min_peers: int, share: float):
        self.peer_facts = tuple(peer_facts)
        self.min_peers = min_peers
        self.share = share
        self.compared = tuple(
            sorted(
                f
                for f in queries.FACTS
                if f not in outliers.NOT_COMPARED and f not in self.peer_facts
            )
        )
        self._groups: dict[Key, _Group] = {}
        self._group_of: dict[str, Key] = {}
        self._dirty: set[Key] = set()
        self._order: list[tuple[str, str]] = []
        """Every outlier's (uuid, fact), sorted."""
        self._outliers: dict[tuple[str, str], dict[str, Any]] = {}

    def put(self, node: dict[str, Any]) -> None:
        """Add ``node``, or replace the node of its UUID."""
        uuid = node["uuid"]
        if uuid in self._group_of:
            self.drop(uuid)
        key = tuple(node.get(f) for f in self.peer_facts)
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = _Group(self.compared)
        group.add(node)
        self._group_of[uuid] = key
        self._dirty.add(key)

    def drop(self, uuid: str) -> None:
        """Forget the node ``uuid`` (nothing if unknown)."""
        key = self._group_of.pop(uuid, None)
        if key is None:
            return
        self._groups[key].remove(uuid)
        self._dirty.add(key)

    def outliers(self) -> list[dict[str, Any]]:
        """What :func:`inspector.fleet.outliers.find` answers over the
        nodes held (the dicts are shared: do not change them)."""
        # every old outlier out first: a node that moved to another group
        # may be an outlier on the same fact there
        for key in self._dirty:
            self._forget(key)
        for key in self._dirty:
            self._refresh(key)
        self._dirty.clear()
        return [self._outliers[k] for k in self._order]

    def _forget(self, key: Key) -> None:
        group = self._groups[key]
        for found in group.found:
            del self._order[bisect.bisect_left(self._order, found)]
            del self._outliers[found]
        group.found = []

    def _refresh(self, key: Key) -> None:
        group = self._groups[key]
        if not group.members:
            del self._groups[key]
            return
        peers = len(group.members) - 1
        if peers < max(self.min_peers, 1):
            return
        for fact in self.compared:
            counts = group.counts[fact]
            for value, expected in outliers.verdicts(counts, peers, self.share):
                for uuid in group.holders[fact][value]:
                    found = (uuid, fact)
                    group.found.append(found)
                    bisect.insort(self._order, found)
                    self._outliers[found] = {
                        "uuid": uuid,
                        "fact": fact,
                        "value": value,
                        "expected": expected,
                        "peers": peers,
                    }
