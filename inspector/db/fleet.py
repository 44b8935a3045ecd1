"""The fleet view: the latest hardware record of every node
(``introspections`` joined to ``hardware_runs`` through
``introspections.hardware_run``, one row per node), its facts listed,
filtered and grouped, and the newest hardware changes across the fleet.

Never a group-wise maximum over the history: the join reads one run per
node through the runs' primary key.
"""

import dataclasses
import datetime
import json
import threading
import time
import weakref
from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar, cast

import sqlalchemy as sa

from inspector import exceptions
from inspector.db import models
from inspector.db.engine import Database

T = TypeVar("T")

_NODES = cast(sa.Table, models.Introspection.__table__)
_RUNS = cast(sa.Table, models.HardwareRun.__table__)

INTEGER_FACTS = ("cpus", "memory_mb", "local_gb", "disks", "nics")
TEXT_FACTS = (
    "cpu_model",
    "cpu_arch",
    "vendor",
    "product",
    "serial",
    "bios_version",
)
FACTS = (
    "cpus",
    "cpu_model",
    "cpu_arch",
    "memory_mb",
    "local_gb",
    "disks",
    "nics",
    "vendor",
    "product",
    "serial",
    "bios_version",
    "finished_at",
    "name",
)
"""What ``fields``, the filters and ``group_by`` may name (besides
``uuid``, always answered): the facts of a node's latest run, when it
finished and the node's name at that time."""

_COLUMNS: dict[str, sa.ColumnElement[Any]] = {
    **{fact: _RUNS.c[fact] for fact in INTEGER_FACTS + TEXT_FACTS},
    "finished_at": _RUNS.c.finished_at,
    "name": _RUNS.c.node_name,
}

_JOIN = _NODES.join(_RUNS, _RUNS.c.run == _NODES.c.hardware_run)
_IN_VIEW = (
    sa.select(_NODES.c.uuid)
    .select_from(_JOIN)
    .where(_NODES.c.uuid == sa.bindparam("uuid"))
)


def check_facts(names: list[str], what: str) -> None:
    """:raises InvalidInput: naming the first of ``names`` that is no fact."""
    for name in names:
        if name not in FACTS and name != "uuid":
            raise exceptions.InvalidInput(
                f"Unknown fact {name[:64]!r} in {what}; the facts are uuid, "
                f"{', '.join(FACTS)}"
            )


def typed(fact: str, text: str) -> Any:
    """``text`` as the type fact ``fact`` compares as.

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
        if parsed.tzinfo is not None:  # stored as naive UTC
            parsed = parsed.astimezone(datetime.UTC).replace(tzinfo=None)
        return parsed
    return text


def _where(query: sa.Select[Any], filters: Mapping[str, str]) -> sa.Select[Any]:
    check_facts(list(filters), "the filters")
    for fact, text in sorted(filters.items()):
        if fact == "uuid":
            query = query.where(_NODES.c.uuid == text.lower())
        else:
            query = query.where(_COLUMNS[fact] == typed(fact, text))
    return query


def _fact_value(value: Any) -> Any:
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    return value


def nodes(
    db: Database,
    *,
    fields: list[str] | None = None,
    filters: Mapping[str, str] | None = None,
    limit: int,
    marker: str | None = None,
) -> list[dict[str, Any]]:
    """A page of the fleet, by node UUID: ``uuid`` and the ``fields`` asked
    for (every fact when None) of each node's latest run.

    :raises InvalidInput: an unknown fact, a value that does not parse, or
        a ``marker`` that is not a node of the fleet view.
    """
    wanted = list(FACTS) if fields is None else [f for f in fields if f != "uuid"]
    check_facts(wanted, "fields")
    columns = [_NODES.c.uuid, *(_COLUMNS[f].label(f) for f in wanted)]
    query = _where(sa.select(*columns).select_from(_JOIN), filters or {})
    with db.connect() as conn:
        if marker is not None:
            if conn.execute(_IN_VIEW, {"uuid": marker}).first() is None:
                raise exceptions.InvalidInput(
                    f"Marker {marker[:64]} is not a node of the inventory (a node "
                    "with a hardware record)"
                )
            query = query.where(_NODES.c.uuid > marker)
        query = query.order_by(_NODES.c.uuid).limit(limit)
        result = conn.execute(query)
        keys = list(result.keys())
        found = [dict(zip(keys, row, strict=True)) for row in result]
    if "finished_at" in keys:
        for entry in found:
            entry["finished_at"] = _fact_value(entry["finished_at"])
    return found


def summary(
    db: Database, group_by: str, filters: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """``[{"value", "count"}]`` of fact ``group_by`` over the fleet (the
    most common value first).

    :raises InvalidInput: an unknown fact or filter value.
    """
    check_facts([group_by], "group_by")
    column = _NODES.c.uuid if group_by == "uuid" else _COLUMNS[group_by]
    count = sa.func.count().label("count")
    query = _where(
        sa.select(column.label("value"), count).select_from(_JOIN),
        filters or {},
    ).group_by(column)
    with db.connect() as conn:
        groups = [
            {"value": _fact_value(row.value), "count": row.count}
            for row in conn.execute(query)
        ]
    groups.sort(key=lambda g: (-g["count"], g["value"] is None, str(g["value"])))
    return groups


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """The whole fleet view at one moment, read in one statement: the
    outliers', the cabling's and the page's input. Shared between requests
    (see :func:`cached`): never changed in place."""

    facts: list[dict[str, Any]]
    """Every node's ``uuid`` and facts, by UUID."""
    links: list[dict[str, Any]]
    """Every node's ``{"uuid", "name", "links"}`` (its latest run's
    ``links`` column, parsed), by UUID."""


def snapshot(db: Database) -> Snapshot:
    """Read the fleet view (10,000 rows at most, one per node)."""
    columns = [_NODES.c.uuid, *(_COLUMNS[f].label(f) for f in FACTS)]
    query = (
        sa.select(*columns, _RUNS.c.links.label("_links"))
        .select_from(_JOIN)
        .order_by(_NODES.c.uuid)
    )
    facts = []
    links = []
    with db.connect() as conn:
        result = conn.execute(query)
        keys = list(result.keys())[:-1]
        for row in result:
            entry = dict(zip(keys, row, strict=False))
            entry["finished_at"] = _fact_value(entry["finished_at"])
            facts.append(entry)
            raw = row[-1]
            links.append(
                {
                    "uuid": entry["uuid"],
                    "name": entry["name"],
                    "links": json.loads(raw) if raw else [],
                }
            )
    return Snapshot(facts, links)


RECENT = datetime.timedelta(hours=1)
"""How far back the fingerprint counts runs (see :func:`fingerprint`)."""
CACHE_SECONDS = 30.0
"""The longest a cached answer lives even when the fingerprint has not
changed (a change it cannot see: a latest run pruned by age)."""


def fingerprint(db: Database) -> tuple[Any, ...]:
    """What changes when the fleet view does, in one cheap statement (each
    part read through an index): how many nodes there are, the newest
    run's end, and how many runs ended in the last hour (so a run committed
    after a newer one, or removed, still shows)."""
    since = models.utcnow() - RECENT
    query = sa.select(
        sa.select(sa.func.count()).select_from(_NODES).scalar_subquery(),
        sa.select(sa.func.max(_RUNS.c.finished_at)).scalar_subquery(),
        sa.select(sa.func.count())
        .select_from(_RUNS)
        .where(_RUNS.c.finished_at >= since)
        .scalar_subquery(),
    )
    with db.connect() as conn:
        row = conn.execute(query).one()
    return tuple(row)


class _Cache:
    def __init__(self) -> None:
        self.guard = threading.Lock()
        self.fingerprint: tuple[Any, ...] | None = None
        self.since = 0.0
        self.values: dict[Hashable, Any] = {}


_CACHES: "weakref.WeakKeyDictionary[Database, _Cache]" = weakref.WeakKeyDictionary()
_CACHES_GUARD = threading.Lock()


def cached(db: Database, key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``'s answer over the fleet view, kept while the view's
    :func:`fingerprint` stays the same (and at most ``CACHE_SECONDS``).

    The outliers, the cabling and the page read all 10,000 nodes; between
    two finished runs they answer from here, at the cost of one cheap
    statement. The answer is shared: callers must not change it.
    """
    with _CACHES_GUARD:
        cache = _CACHES.get(db)
        if cache is None:
            cache = _CACHES[db] = _Cache()
    now = time.monotonic()
    current = fingerprint(db)
    with cache.guard:
        if current != cache.fingerprint or now - cache.since > CACHE_SECONDS:
            cache.fingerprint, cache.since, cache.values = current, now, {}
        if key in cache.values:
            found: T = cache.values[key]
            return found
        values = cache.values
    value = compute()
    with cache.guard:
        if cache.values is values:  # not reset meanwhile
            values[key] = value
    return value


def recent_changes(db: Database, limit: int) -> list[dict[str, Any]]:
    """The newest ``limit`` runs of the whole fleet that changed something:
    ``{"run", "uuid", "name", "finished_at", "change_count", "changes"}``.

    Walks the runs newest first through their ``finished_at`` index and
    stops at ``limit`` (runs without changes are skipped on the way).
    """
    query = (
        sa.select(
            _RUNS.c.run,
            _RUNS.c.node_uuid,
            _RUNS.c.node_name,
            _RUNS.c.finished_at,
            _RUNS.c.change_count,
            _RUNS.c.changes,
        )
        .where(_RUNS.c.change_count > 0)
        .order_by(_RUNS.c.finished_at.desc(), _RUNS.c.run.desc())
        .limit(limit)
    )
    with db.connect() as conn:
        return [_run_changes(row) for row in conn.execute(query)]


def _run_changes(row: Any) -> dict[str, Any]:
    return {
        "run": row.run,
        "uuid": row.node_uuid,
        "name": row.node_name,
        "finished_at": _fact_value(row.finished_at),
        "change_count": row.change_count,
        "changes": json.loads(row.changes) if row.changes else [],
    }


def node(db: Database, uuid: str, runs: int) -> dict[str, Any] | None:
    """One node of the fleet view: ``{"facts", "runs"}``, its latest run's
    facts and its newest ``runs`` runs with changes; None when the node
    has no hardware record."""
    found = nodes(db, filters={"uuid": uuid}, limit=1)
    if not found:
        return None
    query = (
        sa.select(
            _RUNS.c.run,
            _RUNS.c.node_uuid,
            _RUNS.c.node_name,
            _RUNS.c.finished_at,
            _RUNS.c.change_count,
            _RUNS.c.changes,
        )
        .where(_RUNS.c.node_uuid == uuid.lower(), _RUNS.c.change_count > 0)
        .order_by(_RUNS.c.finished_at.desc(), _RUNS.c.run.desc())
        .limit(runs)
    )
    with db.connect() as conn:
        changed = [_run_changes(row) for row in conn.execute(query)]
    return {"facts": found[0], "runs": changed}
