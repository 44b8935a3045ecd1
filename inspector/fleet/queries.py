"""The facts of the fleet view and the questions asked of them: which
facts a request may name, a filter's value as its fact's type, a page of
nodes by UUID, and how many nodes have each value of a fact. Pure: the API
and the CLI hand it the fleet's snapshot (one dict per node)."""

import bisect
import collections
import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from inspector import exceptions, hardware_facts

INTEGER_FACTS = hardware_facts.INTEGER
FACTS = (*hardware_facts.COLUMNS, "finished_at", "name")
"""What ``fields``, the filters and ``group_by`` may name (besides
``uuid``, always answered): the facts of a node's latest run, when it
finished and the node's name at that time."""


def check(names: Sequence[str], what: str) -> None:
    """:raises InvalidInput: naming the first of ``names`` that is no fact."""
    for name in names:
        if name not in FACTS and name != "uuid":
            raise exceptions.InvalidInput(
                f"Unknown fact {name[:64]!r} in {what}; the facts are uuid, "
                f"{', '.join(FACTS)}"
            )


def typed(fact: str, text: str) -> Any:
    """``text`` as fact ``fact`` compares (``finished_at``: as its ISO
    text in UTC).

    :raises InvalidInput: it does not parse (``memory_mb=lots``).
    """
    if fact in INTEGER_FACTS:
        try:
            return int(text)
        except ValueError:
            raise exceptions.InvalidInput(
                f"Invalid value for {fact}: {text[:32]!r}, expected an integer"
            ) from None
    if fact == "finished_at":
        try:
            parsed = datetime.datetime.fromisoformat(text)
        except ValueError:
            raise exceptions.InvalidInput(
                f"Invalid value for finished_at: {text[:32]!r}, expected an "
                "ISO 8601 time"
            ) from None
        if parsed.tzinfo is not None:  # kept as naive UTC
            parsed = parsed.astimezone(datetime.UTC).replace(tzinfo=None)
        return parsed.isoformat()
    if fact == "uuid":
        return text.lower()
    return text


def matching(
    nodes: Sequence[dict[str, Any]], filters: Mapping[str, str]
) -> Sequence[dict[str, Any]]:
    """The nodes whose facts equal every filter's value.

    :raises InvalidInput: an unknown fact or a value that does not parse.
    """
    check(list(filters), "the filters")
    wanted = [(fact, typed(fact, text)) for fact, text in sorted(filters.items())]
    if not wanted:
        return nodes
    return [n for n in nodes if all(n.get(f) == v for f, v in wanted)]


def page(
    nodes: Sequence[dict[str, Any]],
    *,
    fields: Sequence[str] | None = None,
    filters: Mapping[str, str] | None = None,
    limit: int,
    marker: str | None = None,
) -> list[dict[str, Any]]:
    """A page of ``nodes`` (sorted by UUID): ``uuid`` and the ``fields``
    asked for (every fact when None) of each node after ``marker``.

    :raises InvalidInput: an unknown fact, a value that does not parse, or
        a ``marker`` that is not a node of ``nodes``.
    """
    wanted = list(FACTS) if fields is None else [f for f in fields if f != "uuid"]
    check(wanted, "fields")
    found = matching(nodes, filters or {})
    start = 0
    if marker is not None:
        marker = marker.lower()
        uuids = [n["uuid"] for n in nodes]
        index = _position(uuids, marker)
        if index is None:
            raise exceptions.InvalidInput(
                f"Marker {marker[:64]} is not a node of the inventory (a node "
                "with a hardware record)"
            )
        start = _position([n["uuid"] for n in found], marker, after=True) or 0
    keys = ("uuid", *wanted)
    return [{k: n.get(k) for k in keys} for n in found[start : start + limit]]


def _position(uuids: list[str], uuid: str, *, after: bool = False) -> int | None:
    """Where ``uuid`` is in sorted ``uuids`` (None: absent), or with
    ``after`` the index of the first one greater."""
    index = bisect.bisect_left(uuids, uuid)
    if after:
        return bisect.bisect_right(uuids, uuid)
    return index if index < len(uuids) and uuids[index] == uuid else None


def summary(
    nodes: Sequence[dict[str, Any]],
    group_by: str,
    filters: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """``[{"value", "count"}]`` of fact ``group_by`` (the most common
    value first).

    :raises InvalidInput: an unknown fact or filter value.
    """
    check([group_by], "group_by")
    counts = collections.Counter(
        n.get(group_by) for n in matching(nodes, filters or {})
    )
    ordered = sorted(counts.items(), key=lambda g: (-g[1], g[0] is None, str(g[0])))
    return [{"value": value, "count": count} for value, count in ordered]
