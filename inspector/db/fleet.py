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
from collections.abc import Collection, Iterator
from typing import Any, cast

import sqlalchemy as sa

from inspector import hardware_facts
from inspector.db import models
from inspector.db.engine import Database

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
    """The whole fleet view at one moment (what the CLI reads)."""

    facts: list[dict[str, Any]]
    """Every node's ``uuid`` and facts, by UUID."""
    links: list[dict[str, Any]]
    """Every node's ``{"uuid", "name", "links"}`` (its latest run's
    ``links`` column, parsed), by UUID."""


_VIEW_COLUMNS = [
    _NODES.c.uuid,
    *(_COLUMNS[f].label(f) for f in FACTS),
    _RUNS.c.links.label("_links"),
]
_WHOLE = sa.select(*_VIEW_COLUMNS).select_from(_JOIN)
_WITH_RECORD = sa.select(sa.func.count(_NODES.c.hardware_run))
"""How many nodes have a hardware record (``hardware_run`` is set)."""
_LISTED = sa.select(_NODES.c.uuid).where(_NODES.c.hardware_run.is_not(None))
"""Which nodes have a hardware record."""

Entry = tuple[dict[str, Any], dict[str, Any]]
"""A node of the view: its facts and its links (:class:`Snapshot`)."""


def _entries(result: Any) -> dict[str, Entry]:
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
    return found


def snapshot(db: Database) -> Snapshot:
    """Read the whole fleet view (10,000 rows at most, one per node)."""
    with db.connect() as conn:
        found = _entries(conn.execute(_WHOLE))
    # in Python's order, which the pages' bisection relies on (a
    # PostgreSQL collation may order text otherwise)
    ordered = sorted(found)
    return Snapshot([found[u][0] for u in ordered], [found[u][1] for u in ordered])


@dataclasses.dataclass(frozen=True)
class Delta:
    """What changed in the fleet view since a read (:func:`read_changes`)."""

    nodes: dict[str, Entry]
    """The nodes read (changed or not: the caller compares), by UUID."""
    gone: set[str]
    """Nodes held before that have no record any more."""
    read_at: datetime.datetime
    """When it was read (naive UTC): the next read starts from there."""
    whole: bool
    """Every node was read (``nodes`` is the whole view)."""
    runs: set[str] = dataclasses.field(default_factory=set)
    """The runs that ended in the window read (``seen`` of the next
    read)."""
    changed: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """The runs not ``seen`` before that changed something, as
    :func:`recent_changes` gives them."""


def read_changes(
    db: Database,
    since: datetime.datetime | None = None,
    known: Collection[str] = (),
    seen: Collection[str] = (),
) -> Delta:
    """What changed in the fleet view since ``since`` for a reader that
    holds the nodes ``known`` and has read the runs ``seen``: the whole
    view when ``since`` is None.

    Otherwise, through the runs' ``finished_at`` index, which runs ended
    since ``since`` less :data:`RECENT` (a run committed late: its end is
    written before its transaction commits), their UUIDs only; the view's
    rows of the nodes of runs not ``seen`` (by node UUID); and how many
    nodes have a record (one count). Only when that count is not the nodes
    held plus the new ones, which nodes have a record is read (one column
    of the nodes' table) to find the nodes gone (deleted) and any not held
    yet (read by UUID).
    """
    read_at = models.utcnow()
    with db.connect() as conn:
        if since is None:
            found = _entries(conn.execute(_WHOLE))
            runs = set(
                conn.execute(_RECENT_RUNS, {"since": read_at - RECENT}).scalars()
            )
            return Delta(found, set(known) - set(found), read_at, True, runs)
        runs = set(conn.execute(_RECENT_RUNS, {"since": since - RECENT}).scalars())
        fresh = runs.difference(seen)
        found = {}
        changed = []
        if fresh:  # their nodes' rows; those of them that changed something
            of_runs = sa.select(_RUNS.c.node_uuid).where(_RUNS.c.run.in_(sorted(fresh)))
            found = _entries(conn.execute(_WHOLE.where(_NODES.c.uuid.in_(of_runs))))
            query = _CHANGED_RUNS.where(_RUNS.c.run.in_(sorted(fresh)))
            changed = [_run_changes(row) for row in conn.execute(query)]
        count = conn.execute(_WITH_RECORD).scalar_one()
        held = set(known) | set(found)
        gone: set[str] = set()
        if count != len(held):
            listed = set(conn.execute(_LISTED).scalars())
            gone = held - listed
            for uuid in gone:
                found.pop(uuid, None)
            found.update(_by_uuid(conn, sorted(listed - held)))
    return Delta(found, gone, read_at, False, runs, changed)


def _by_uuid(conn: sa.Connection, nodes: list[str]) -> dict[str, Entry]:
    found = {}
    for start in range(0, len(nodes), 500):
        chunk = nodes[start : start + 500]
        found.update(_entries(conn.execute(_WHOLE.where(_NODES.c.uuid.in_(chunk)))))
    return found


_RECENT_RUNS = sa.select(_RUNS.c.run).where(
    _RUNS.c.finished_at >= sa.bindparam("since")
)
"""The runs that ended since then (their UUIDs only), through the index."""
RECENT = datetime.timedelta(hours=1)
"""How far back the fingerprint counts runs (see :func:`fingerprint`), and
how far before the last read the next one starts."""
CHUNK = 200
"""Nodes per statement of :func:`whole_in_chunks`."""
_WHOLE_AFTER = (
    _WHOLE.where(_NODES.c.uuid > sa.bindparam("after"))
    .order_by(_NODES.c.uuid)
    .limit(sa.bindparam("size"))
)


def whole_in_chunks(db: Database, size: int = CHUNK) -> Iterator[dict[str, Entry]]:
    """The whole view, ``size`` nodes at a time in the database's order of
    UUIDs, each chunk read on a connection of its own (held only while it
    is read): what a reader in the background applies bit by bit, never
    holding the GIL or its locks for the whole fleet at once. Not one
    snapshot: a node changed meanwhile may be read before or after."""
    after = ""
    while True:
        with db.connect() as conn:
            found = _entries(conn.execute(_WHOLE_AFTER, {"after": after, "size": size}))
        if not found:
            return
        yield found
        if len(found) < size:
            return
        # the last read, in the database's collation (maybe not Python's)
        after = next(reversed(found))


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


_CHANGED_RUNS = (
    sa.select(
        _RUNS.c.run,
        _RUNS.c.node_uuid,
        _RUNS.c.node_name,
        _RUNS.c.finished_at,
        _RUNS.c.change_count,
        _RUNS.c.changes,
        _RUNS.c.source,
        _RUNS.c.interface,
    )
    .where(_RUNS.c.change_count > 0)
    .order_by(_RUNS.c.finished_at.desc(), _RUNS.c.run.desc())
)
"""Runs that changed something, newest first (the page's and a node's)."""


def nodes_changed_since(
    db: Database, since: datetime.datetime
) -> tuple[int, datetime.datetime | None]:
    """How many nodes have a run that changed something and ended at or
    after ``since`` (naive UTC), and the oldest of those nodes' newest
    such runs' end: until it is ``since``'s age, no node drops out of the
    count (None: no node).

    Only the runs since then are read, through their ``finished_at``
    index, and grouped here: grouped by node in SQL, SQLite walks the
    node index, the whole history."""
    query = sa.select(_RUNS.c.node_uuid, _RUNS.c.finished_at).where(
        _RUNS.c.finished_at >= since, _RUNS.c.change_count > 0
    )
    newest: dict[str, datetime.datetime] = {}
    with db.connect() as conn:
        for node_uuid, finished_at in conn.execute(query):
            if node_uuid not in newest or finished_at > newest[node_uuid]:
                newest[node_uuid] = finished_at
    return len(newest), min(newest.values(), default=None)


def present(db: Database, runs: Collection[str]) -> set[str]:
    """Which of ``runs`` are still stored (pruning deletes old runs)."""
    if not runs:
        return set()
    with db.connect() as conn:
        query = sa.select(_RUNS.c.run).where(_RUNS.c.run.in_(sorted(runs)))
        return set(conn.execute(query).scalars())


def newest_first(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``runs`` (of :func:`recent_changes`) in its order, each once."""
    unique = {run["run"]: run for run in runs}
    return sorted(
        unique.values(), key=lambda r: (r["finished_at"], r["run"]), reverse=True
    )


def recent_changes(db: Database, limit: int) -> list[dict[str, Any]]:
    """The newest ``limit`` runs of the whole fleet that changed something:
    ``{"run", "uuid", "name", "finished_at", "change_count", "changes",
    "source", "interface"}``.

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
        "source": row.source,
        "interface": row.interface,
    }


_NODE_RUNS = (
    sa.select(
        _RUNS.c.run,
        _RUNS.c.started_at,
        _RUNS.c.finished_at,
        _RUNS.c.state,
        _RUNS.c.error,
        _RUNS.c.change_count,
        _RUNS.c.changes,
        _RUNS.c.source,
        _RUNS.c.interface,
    )
    .where(_RUNS.c.node_uuid == sa.bindparam("node"))
    .order_by(_RUNS.c.finished_at.desc(), _RUNS.c.run.desc())
)
_NODE_RUN_COUNT = (
    sa.select(sa.func.count())
    .select_from(_RUNS)
    .where(_RUNS.c.node_uuid == sa.bindparam("node"))
)
_NODE = (
    sa.select(
        _NODES.c.uuid,
        *(_COLUMNS[f].label(f) for f in FACTS),
        _RUNS.c.run.label("_run"),
        _RUNS.c.record.label("_record"),
        _RUNS.c.links.label("_links"),
        _NODES.c.state.label("_status"),
        _NODES.c.error.label("_error"),
        _NODE_RUN_COUNT.scalar_subquery().label("_runs"),
    )
    .select_from(_JOIN)
    .where(_NODES.c.uuid == sa.bindparam("node"))
)
"""A node's latest run (its record too) and how many runs it has kept."""


def node(db: Database, uuid: str, offset: int, limit: int) -> dict[str, Any] | None:
    """One node of the fleet view and a page of its runs: ``{"facts",
    "run", "record", "links", "status", "error", "runs_total", "runs"}``,
    its latest run's facts, that run's UUID, hardware record and links
    (parsed), its introspection's state and error now, how many runs it
    has kept (failed ones too), and ``limit`` of them newest first from
    ``offset``: ``{"run", "started_at", "finished_at", "state", "error",
    "change_count", "changes", "source", "interface"}``. None when the
    node has no hardware record.

    Two statements on one connection: the node's row by primary key
    (with its run's by primary key and the count of its runs), then its
    runs through their node index (``[history]keep_runs`` bounds them)."""
    with db.connect() as conn:
        found = conn.execute(_NODE, {"node": uuid}).mappings().first()
        if found is None:
            return None
        count = found["_runs"]
        rows = []
        if offset < count:
            query = _NODE_RUNS.offset(offset).limit(limit)
            rows = [dict(row) for row in conn.execute(query, {"node": uuid}).mappings()]
    for entry in rows:
        entry["started_at"] = _fact_value(entry["started_at"])
        entry["finished_at"] = _fact_value(entry["finished_at"])
        entry["changes"] = json.loads(entry["changes"]) if entry["changes"] else []
    facts = {k: _fact_value(v) for k, v in found.items() if not k.startswith("_")}
    record = found["_record"]
    return {
        "facts": facts,
        "run": found["_run"],
        "record": json.loads(record) if record else {},
        "links": json.loads(found["_links"]) if found["_links"] else [],
        "status": found["_status"],
        "error": found["_error"],
        "runs_total": count,
        "runs": rows,
    }


_CHANGED_BEFORE = _CHANGED_RUNS.where(
    sa.or_(
        _RUNS.c.finished_at < sa.bindparam("at"),
        sa.and_(
            _RUNS.c.finished_at == sa.bindparam("at"),
            _RUNS.c.run < sa.bindparam("run"),
        ),
    )
)


def changes_before(
    db: Database, at: datetime.datetime, run: str, limit: int
) -> list[dict[str, Any]]:
    """:func:`recent_changes` after the run ``run`` that ended ``at``
    (naive UTC) in their order: the next page of the fleet's changes,
    read from there through the ``finished_at`` index at any depth."""
    query = _CHANGED_BEFORE.limit(limit)
    with db.connect() as conn:
        rows = conn.execute(query, {"at": at, "run": run})
        return [_run_changes(row) for row in rows]


def run_end(db: Database, run: str) -> str | None:
    """When the run ``run`` with changes ended (ISO, naive UTC); None: no
    such run (pruned, or it changed nothing)."""
    query = sa.select(_RUNS.c.finished_at).where(
        _RUNS.c.run == run, _RUNS.c.change_count > 0
    )
    with db.connect() as conn:
        found = conn.execute(query).scalar()
    return None if found is None else _fact_value(found)
