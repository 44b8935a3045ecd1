"""Outliers: nodes whose fact differs from what most of their peers have
(peers: the nodes sharing the values of ``[inventory]peer_facts``)."""

import collections
import heapq
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from inspector import hardware_facts

NOT_COMPARED = frozenset({"uuid", "name", "finished_at", *hardware_facts.OWN})
"""Facts every node has its own value of: never an outlier."""


def find(
    nodes: Iterable[dict[str, Any]],
    *,
    peer_facts: Sequence[str],
    min_peers: int,
    share: float,
) -> list[dict[str, Any]]:
    """``[{"uuid", "fact", "value", "expected", "peers"}]`` by node UUID and
    fact.

    A node's peers are the *other* nodes with its values of ``peer_facts``
    (it does not count itself). It is an outlier on a fact when it has at
    least ``min_peers`` peers and at least ``share`` of them (0 to 1) have
    one same value of that fact that it does not have; ``expected`` is that
    value, ``peers`` how many peers it has. A missing value (null) is a
    value like any other: a node that reports no BIOS version among peers
    that all do is an outlier.
    """
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = collections.defaultdict(list)
    for node in nodes:
        groups[tuple(node.get(f) for f in peer_facts)].append(node)
    found: list[dict[str, Any]] = []
    for members in groups.values():
        peers = len(members) - 1
        if peers < max(min_peers, 1):
            continue
        compared = sorted(
            f for f in members[0] if f not in NOT_COMPARED and f not in peer_facts
        )
        for fact in compared:
            counts = collections.Counter(m.get(fact) for m in members)
            for value, expected in verdicts(counts, peers, share):
                found.extend(
                    {
                        "uuid": node["uuid"],
                        "fact": fact,
                        "value": value,
                        "expected": expected,
                        "peers": peers,
                    }
                    for node in members
                    if node.get(fact) == value
                )
    found.sort(key=lambda o: (o["uuid"], o["fact"]))
    return found


def order(value: Any) -> tuple[bool, bool, Any]:
    """How values of one fact rank among equally common ones: integers
    and texts in their own order, null last."""
    return (value is None, isinstance(value, str), 0 if value is None else value)


def verdicts(
    counts: Mapping[Any, int], peers: int, share: float
) -> list[tuple[Any, Any]]:
    """``[(value, expected)]``: the values of one fact (``counts``: how
    many members of a peer group have each) whose holders are outliers,
    and what their peers have instead.

    For each value, ``expected`` is the most common value that is not it
    (between two as common, the first in :func:`order`); its holders are
    outliers when at least ``share`` of their ``peers`` have it.
    """
    if len(counts) < 2:
        return []
    top = heapq.nsmallest(2, counts.items(), key=lambda vc: (-vc[1], order(vc[0])))
    found = []
    for value in counts:
        expected, count = top[0] if top[0][0] != value else top[1]
        if count >= share * peers:
            found.append((value, expected))
    return found
