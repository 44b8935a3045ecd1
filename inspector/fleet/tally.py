"""How many nodes have each value of each fact, kept by delta as nodes
come, change and go: the unfiltered summary (and the page's nodes by
product) without counting the fleet again."""

import collections
from typing import Any

from inspector.fleet import queries

PRODUCT = ("vendor", "product")
"""The page's grouping: one model of machine."""


class FactTally:
    """Per fact, how many of the nodes held have each value.

    Not thread-safe: the caller serialises every call.
    """

    def __init__(self) -> None:
        self._counts: dict[Any, collections.Counter[Any]] = {
            fact: collections.Counter() for fact in (*queries.FACTS, PRODUCT)
        }

    def add(self, node: dict[str, Any]) -> None:
        for fact, counts in self._counts.items():
            counts[_value(node, fact)] += 1

    def remove(self, node: dict[str, Any]) -> None:
        for fact, counts in self._counts.items():
            value = _value(node, fact)
            counts[value] -= 1
            if not counts[value]:
                del counts[value]

    def summary(self, group_by: str) -> list[dict[str, Any]] | None:
        """What :func:`inspector.fleet.queries.summary` answers over the
        nodes held, without filters; None for a fact not counted here
        (``uuid``: each node its own).

        :raises InvalidInput: an unknown fact.
        """
        queries.check([group_by], "group_by")
        counts = self._counts.get(group_by)
        if counts is None:
            return None
        ordered = sorted(counts.items(), key=lambda g: (-g[1], g[0] is None, str(g[0])))
        return [{"value": value, "count": count} for value, count in ordered]

    def products(self) -> list[tuple[tuple[Any, Any], int]]:
        """``[((vendor, product), count)]``, the most common first."""
        return sorted(self._counts[PRODUCT].items(), key=lambda p: (-p[1], str(p[0])))


def _value(node: dict[str, Any], fact: Any) -> Any:
    if isinstance(fact, tuple):
        return tuple(node.get(f) for f in fact)
    return node.get(fact)
