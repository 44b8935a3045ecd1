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
from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

import sqlalchemy as sa

from inspector import hardware_facts
from inspector.db import models
from inspector.db.engine import Database

T = TypeVar("T")

_NODES = cast(sa.Table, models.Introspection.__table__)
_RUNS = cast(sa.Table, models.HardwareRun.__table__)

INTEGER_FACTS = hardware_facts.INTEGER
TEXT_FACTS = hardware_facts.TEXT
FACTS = (*hardware_facts.COLUMNS, "finished_at", "name")
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


def _fact_value(value: Any) -> Any:
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    return value


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """The whole fleet view at one moment: the input of every endpoint of
    the view and of the page. Shared between requests (see
    :func:`current`): never changed in place."""

    facts: list[dict[str, Any]]
    """Every node's ``uuid`` and facts, by UUID."""
    links: list[dict[str, Any]]
    """Every node's ``{"uuid", "name", "links"}`` (its latest run's
    ``links`` column, parsed), by UUID."""
    read_at: datetime.datetime = dataclasses.field(default_factory=models.utcnow)
    """When it was read (naive UTC): the next read starts from there."""
    full_at: float = dataclasses.field(default_factory=time.monotonic)
    """When the whole view was last read (not only what changed)."""


_VIEW_COLUMNS = [
    _NODES.c.uuid,
    *(_COLUMNS[f].label(f) for f in FACTS),
    _RUNS.c.links.label("_links"),
]


def snapshot(db: Database, previous: Snapshot | None = None) -> Snapshot:
    """Read the fleet view (10,000 rows at most, one per node).

    With ``previous``, read only the nodes whose latest run ended since
    ``previous`` was read (less :data:`RECENT`: a run committed late),
    through the runs' ``finished_at`` index, and merge them in; the whole
    view is read instead when the merge does not account for every node
    with a record (a node gone, or one whose latest run went).
    """
    read_at = models.utcnow()
    if previous is None:
        query = sa.select(*_VIEW_COLUMNS).select_from(_JOIN)
    else:
        query = (
            sa.select(*_VIEW_COLUMNS)
            .select_from(_RUNS)
            .join(
                _NODES,
                sa.and_(
                    _NODES.c.uuid == _RUNS.c.node_uuid,
                    _NODES.c.hardware_run == _RUNS.c.run,
                ),
            )
            .where(_RUNS.c.finished_at >= previous.read_at - RECENT)
        )
    with db.connect() as conn:
        result = conn.execute(query)
        keys = list(result.keys())[:-1]
        found = {}
        for row in result:
            entry = dict(zip(keys, row, strict=False))
            entry["finished_at"] = _fact_value(entry["finished_at"])
            raw = row[-1]
            link = {
                "uuid": entry["uuid"],
                "name": entry["name"],
                "links": json.loads(raw) if raw else [],
            }
            found[entry["uuid"]] = (entry, link)
        if previous is not None:
            count = conn.execute(_WITH_RECORD).scalar_one()
    if previous is not None:
        merged = dict(
            zip(
                (n["uuid"] for n in previous.facts),
                zip(previous.facts, previous.links, strict=True),
                strict=True,
            )
        )
        merged.update(found)
        if len(merged) != count:
            return snapshot(db)
        found = merged
        full_at = previous.full_at
    else:
        full_at = time.monotonic()
    # in Python's order, which the pages' bisection relies on (a
    # PostgreSQL collation may order text otherwise)
    ordered = sorted(found)
    return Snapshot(
        [found[u][0] for u in ordered],
        [found[u][1] for u in ordered],
        read_at,
        full_at,
    )


_WITH_RECORD = sa.select(sa.func.count(_NODES.c.hardware_run))
"""How many nodes have a hardware record (``hardware_run`` is set)."""

RECENT = datetime.timedelta(hours=1)
"""How far back the fingerprint counts runs (see :func:`fingerprint`)."""
FULL_READ_SECONDS = 300.0
"""How often the whole view is read again even when nothing says it
changed (a change the fingerprint cannot see: a latest run pruned by age,
leaving its node's pointer dangling)."""


def fingerprint(db: Database) -> tuple[Any, ...]:
    """What changes when the fleet view does, in one cheap statement: how
    many nodes have a record, the newest run's end (through its index), and
    how many runs ended in the last hour (so a run committed after a newer
    one, or removed, still shows)."""
    since = models.utcnow() - RECENT
    query = sa.select(
        _WITH_RECORD.scalar_subquery(),
        sa.select(sa.func.max(_RUNS.c.finished_at)).scalar_subquery(),
        sa.select(sa.func.count())
        .select_from(_RUNS)
        .where(_RUNS.c.finished_at >= since)
        .scalar_subquery(),
    )
    with db.connect() as conn:
        row = conn.execute(query).one()
    return tuple(row)


MAX_ENTRIES = 64
"""Most answers kept per fleet view (one per distinct request)."""


class _Cache:
    def __init__(self) -> None:
        self.guard = threading.Lock()
        self.fingerprint: tuple[Any, ...] | None = None
        self.values: dict[Hashable, Any] = {}
        self.previous: Snapshot | None = None
        """The snapshot of the view before the fingerprint last changed."""


_CACHES: "weakref.WeakKeyDictionary[Database, _Cache]" = weakref.WeakKeyDictionary()
_CACHES_GUARD = threading.Lock()
_SNAPSHOT = "snapshot"


def _cache_of(db: Database) -> _Cache:
    with _CACHES_GUARD:
        cache = _CACHES.get(db)
        if cache is None:
            cache = _CACHES[db] = _Cache()
        return cache


def cached(db: Database, key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``'s answer over the fleet view, kept while the view's
    :func:`fingerprint` stays the same.

    The outliers, the cabling and the page read all 10,000 nodes; between
    two finished runs they answer from here, at the cost of one cheap
    statement. The answer is shared: callers must not change it.
    """
    cache = _cache_of(db)
    current = fingerprint(db)
    with cache.guard:
        if current != cache.fingerprint:
            view = cache.values.get(_SNAPSHOT)
            if view is not None:
                cache.previous = view
            cache.fingerprint, cache.values = current, {}
        if key in cache.values:
            found: T = cache.values[key]
            return found
        values = cache.values
    value = compute()
    with cache.guard:
        # not reset meanwhile; and bounded (answers per query string)
        if cache.values is values and len(values) < MAX_ENTRIES:
            values[key] = value
    return value


def current(db: Database) -> Snapshot:
    """The fleet view now: kept while its fingerprint holds, then read
    again from the one before (only what changed), and read whole every
    :data:`FULL_READ_SECONDS`."""
    cache = _cache_of(db)

    def read() -> Snapshot:
        previous = cache.previous
        if previous is not None and (
            time.monotonic() - previous.full_at > FULL_READ_SECONDS
        ):
            previous = None
        return snapshot(db, previous)

    view = cached(db, _SNAPSHOT, read)
    if time.monotonic() - view.full_at > FULL_READ_SECONDS:
        with cache.guard:  # the next change reads it whole
            cache.previous = None
            if cache.values.get(_SNAPSHOT) is view:
                cache.fingerprint = None
        view = cached(db, _SNAPSHOT, read)
    return view


_CHANGED_RUNS = (
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
)
"""Runs that changed something, newest first (the page's and a node's)."""


def recent_changes(db: Database, limit: int) -> list[dict[str, Any]]:
    """The newest ``limit`` runs of the whole fleet that changed something:
    ``{"run", "uuid", "name", "finished_at", "change_count", "changes"}``.

    Walks the runs newest first through their ``finished_at`` index and
    stops at ``limit`` (runs without changes are skipped on the way).
    """
    query = _CHANGED_RUNS.limit(limit)
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
    columns = [_NODES.c.uuid, *(_COLUMNS[f].label(f) for f in FACTS)]
    latest = sa.select(*columns).select_from(_JOIN).where(_NODES.c.uuid == uuid)
    query = _CHANGED_RUNS.where(_RUNS.c.node_uuid == uuid).limit(runs)
    with db.connect() as conn:
        result = conn.execute(latest)
        keys = list(result.keys())
        found = result.first()
        if found is None:
            return None
        changed = [_run_changes(row) for row in conn.execute(query)]
    facts = {k: _fact_value(v) for k, v in zip(keys, found, strict=True)}
    return {"facts": facts, "runs": changed}
