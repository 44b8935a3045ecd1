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


def _fact_value(value: Any) -> Any:
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    return value


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
    query = sa.select(*columns, _RUNS.c.links.label("_links")).select_from(_JOIN)
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
    # in Python's order, which the pages' bisection relies on (a
    # PostgreSQL collation may order text otherwise)
    facts.sort(key=lambda n: n["uuid"])
    links.sort(key=lambda n: n["uuid"])
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


MAX_ENTRIES = 64
"""Most answers kept per fleet view (one per distinct request)."""


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
        # not reset meanwhile; and bounded (answers per query string)
        if cache.values is values and len(values) < MAX_ENTRIES:
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
    columns = [_NODES.c.uuid, *(_COLUMNS[f].label(f) for f in FACTS)]
    latest = sa.select(*columns).select_from(_JOIN).where(_NODES.c.uuid == uuid)
    query = (
        sa.select(
            _RUNS.c.run,
            _RUNS.c.node_uuid,
            _RUNS.c.node_name,
            _RUNS.c.finished_at,
            _RUNS.c.change_count,
            _RUNS.c.changes,
        )
        .where(_RUNS.c.node_uuid == uuid, _RUNS.c.change_count > 0)
        .order_by(_RUNS.c.finished_at.desc(), _RUNS.c.run.desc())
        .limit(runs)
    )
    with db.connect() as conn:
        result = conn.execute(latest)
        keys = list(result.keys())
        found = result.first()
        if found is None:
            return None
        changed = [_run_changes(row) for row in conn.execute(query)]
    facts = {k: _fact_value(v) for k, v in zip(keys, found, strict=True)}
    return {"facts": facts, "runs": changed}
