"""The hardware history: one row per finished run of a node
(``hardware_runs``), its write, the per-node reads and the pruning.

The row is written by the transaction that ends the run (the writers of
:mod:`inspector.db.transitions` call :func:`ended`), so
recording a run costs the processing step one INSERT; the previous
record it is compared with is one SELECT by primary key
(:func:`get_record`). The fleet view's reads over the latest runs of
every node are not here.
"""

import dataclasses
import datetime
import json
import uuid as uuid_lib
from typing import Any, cast

import sqlalchemy as sa

from inspector import exceptions, hardware_facts, states
from inspector.db import models
from inspector.db.engine import Database
from inspector.db.models import utcnow

_TABLE = cast(sa.Table, models.HardwareRun.__table__)
_INTROSPECTIONS = cast(sa.Table, models.Introspection.__table__)

FACTS = hardware_facts.COLUMNS
"""The fact columns, one per fleet-view fact."""


@dataclasses.dataclass
class Run:
    """A run about to be recorded; ``finished_at`` and ``state`` are the
    finishing write's."""

    run: str
    node_uuid: str
    started_at: datetime.datetime | None = None
    """None: the introspection's start (a reapply's: when it was claimed)."""
    node_name: str | None = None
    error: str | None = None
    record: dict[str, Any] | None = None
    """None for a run that ended before its data was processed."""
    changes: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """Without ``run`` and ``finished_at``: :func:`insert` adds them."""
    change_count: int = 0
    """How many components changed."""
    links: list[dict[str, Any]] | None = None
    facts: dict[str, Any] = dataclasses.field(default_factory=dict)
    source: str = "inspector"
    """Who inspected (:data:`SOURCES`)."""
    interface: str | None = None
    """Ironic's inspect interface, for a run whose source is ``ironic``."""


SOURCES = ("inspector", "ironic", "upstream")
"""A run's ``source``: this service's introspection (or reapply), Ironic's
own inspection (followed), or ironic-inspector 12.x's stored data (imported)."""


def new_run(node_uuid: str) -> Run:
    """A run of ``node_uuid`` under a new UUID, nothing known of it yet
    (what a run that ends in error before its data was processed
    records)."""
    return Run(run=str(uuid_lib.uuid4()), node_uuid=node_uuid)


@dataclasses.dataclass(frozen=True)
class HistoryEntry:
    """One run as ``GET /v1/introspection/<node>/history`` shows it."""

    uuid: str
    started_at: datetime.datetime
    finished_at: datetime.datetime
    state: str
    error: str | None
    changes: int
    source: str
    interface: str | None


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True)


_INSERT = sa.insert(_TABLE)


def insert(
    conn: sa.Connection, run: Run, finished_at: datetime.datetime, state: str
) -> None:
    """Write ``run`` as finished at ``finished_at`` in ``state`` (within
    the caller's transaction; ``started_at`` set by then)."""
    changes = [
        {**change, "run": run.run, "finished_at": finished_at.isoformat()}
        for change in run.changes
    ]
    facts = {name: run.facts.get(name) for name in FACTS}
    conn.execute(
        _INSERT,
        {
            "run": run.run,
            "node_uuid": run.node_uuid,
            "node_name": run.node_name,
            "started_at": run.started_at,
            "finished_at": finished_at,
            "state": state,
            "error": run.error,
            "record": _dumps(run.record),
            "changes": json.dumps(changes, sort_keys=True),
            "change_count": run.change_count,
            "links": _dumps(run.links),
            "source": run.source,
            "interface": run.interface,
            **facts,
        },
    )


def ended(
    conn: sa.Connection,
    run: Run,
    record: Any,
    state: str,
    finished_at: datetime.datetime,
    error: str | None,
) -> None:
    """``run`` of the introspection ``record`` (as it was before it ended)
    written as ended in ``state``: a failed run keeps the introspection's
    error, and starts when the introspection did (a reapply when it was
    claimed)."""
    if state == states.ERROR and run.error is None:
        run.error = error
    if run.started_at is None:
        reapply = record.state == states.REAPPLYING and record.claimed_at
        run.started_at = record.claimed_at if reapply else record.started_at
    insert(conn, run, finished_at, state)


_RECORD_OF = sa.select(_TABLE.c.record).where(_TABLE.c.run == sa.bindparam("run"))


def get_record(db: Database, run: str) -> dict[str, Any] | None:
    """The hardware record of ``run``; None when the run is gone (pruned)
    or kept none."""
    with db.connect() as conn:
        text = conn.execute(_RECORD_OF, {"run": run}).scalar()
    if text is None:
        return None
    record: dict[str, Any] = json.loads(text)
    return record


_MARK = sa.select(_TABLE.c.finished_at, _TABLE.c.run).where(
    _TABLE.c.run == sa.bindparam("run"), _TABLE.c.node_uuid == sa.bindparam("node")
)


def _newest_first(
    conn: sa.Connection, columns: list[Any], node: str, marker: str | None
) -> sa.Select[Any]:
    """A node's runs newest first, after ``marker`` (a run of the node)."""
    table = _TABLE
    query = sa.select(*columns).where(table.c.node_uuid == node)
    if marker is not None:
        mark = conn.execute(_MARK, {"run": marker, "node": node}).first()
        if mark is None:
            raise exceptions.InvalidInput(
                reason=f"marker {marker} is not a run of node {node}"
            )
        query = query.where(
            sa.or_(
                table.c.finished_at < mark.finished_at,
                sa.and_(
                    table.c.finished_at == mark.finished_at, table.c.run < mark.run
                ),
            )
        )
    return query.order_by(table.c.finished_at.desc(), table.c.run.desc())


def history(
    db: Database, node: str, *, limit: int, marker: str | None = None
) -> list[HistoryEntry]:
    """Up to ``limit`` runs of ``node``, newest first, after the run
    ``marker`` (the last of the previous page).

    :raises InvalidInput: ``marker`` is not a run of ``node``.
    """
    t = _TABLE.c
    columns = [
        t.run,
        t.started_at,
        t.finished_at,
        t.state,
        t.error,
        t.change_count,
        t.source,
        t.interface,
    ]
    with db.connect() as conn:
        rows = conn.execute(_newest_first(conn, columns, node, marker).limit(limit))
        return [HistoryEntry(*row) for row in rows]


def changes(
    db: Database, node: str, *, limit: int, marker: str | None = None
) -> tuple[list[dict[str, Any]], str | None]:
    """The changes of ``node``'s runs, newest run first (each run's against
    the run before it), after the run ``marker``; and the marker of the
    next page (None on the last one).

    A page holds whole runs: at most ``limit`` changes, except that a
    single run with more changes than ``limit`` is given whole (its
    changes are bounded by the record's caps). The next page's marker is
    the ``run`` of the page's last change.

    :raises InvalidInput: ``marker`` is not a run of ``node``.
    """
    t = _TABLE.c
    found: list[dict[str, Any]] = []
    with db.connect() as conn:
        # a run with changes has one at least: ``limit`` runs are enough
        query = _newest_first(conn, [t.run, t.changes], node, marker)
        query = query.where(t.change_count > 0).limit(limit + 1)
        rows = conn.execute(query).all()
    for index, row in enumerate(rows):
        run_changes = json.loads(row.changes or "[]")
        if found and len(found) + len(run_changes) > limit:
            return found, rows[index - 1].run
        found.extend(run_changes)
        if len(found) >= limit and index + 1 < len(rows):
            return found, row.run
    return found, None


def exists(db: Database, node: str) -> bool:
    """Whether ``node`` has a run in the history."""
    query = sa.select(_TABLE.c.run).where(_TABLE.c.node_uuid == node).limit(1)
    with db.connect() as conn:
        return conn.execute(query).first() is not None


def node_by_name(db: Database, name: str) -> str | None:
    """The UUID of the node whose latest run recorded it as ``name``
    (for tools that read the database without Ironic); None if none did."""
    t = _TABLE.c
    query = (
        sa.select(t.node_uuid)
        .where(t.node_name == name)
        .order_by(t.finished_at.desc())
        .limit(1)
    )
    with db.connect() as conn:
        found: str | None = conn.execute(query).scalar()
    return found


def _current_runs(conn: sa.Connection, nodes: set[str]) -> set[str]:
    """The runs the fleet view shows for ``nodes``: never pruned."""
    if not nodes:
        return set()
    query = sa.select(_INTROSPECTIONS.c.hardware_run).where(
        _INTROSPECTIONS.c.uuid.in_(sorted(nodes)),
        _INTROSPECTIONS.c.hardware_run.is_not(None),
    )
    return {row.hardware_run for row in conn.execute(query)}


def _delete(conn: sa.Connection, runs: list[str]) -> int:
    if not runs:
        return 0
    conn.execute(sa.delete(_TABLE).where(_TABLE.c.run.in_(runs)))
    return len(runs)


@dataclasses.dataclass
class Pruning:
    """The pruning's state across passes: where its walk over the nodes
    is (each pass looks at the next nodes, then wraps around)."""

    after_node: str = ""
    deleted: int = 0
    """Runs deleted by the last pass."""


def prune(
    db: Database,
    pruning: Pruning,
    *,
    keep_runs: int,
    max_age_days: int,
    batch: int,
    now: datetime.datetime | None = None,
) -> int:
    """One bounded pass: delete at most ``batch`` runs older than
    ``max_age_days`` (0: no age limit) or beyond a node's ``keep_runs``
    newest, never a node's current run (``introspections.hardware_run``).

    The age pass reads at most ``batch`` of the oldest runs (through the
    index on ``finished_at``); the count pass looks at the runs of at
    most ``batch`` nodes' worth of rows, continuing from where the last
    pass stopped (``pruning``). Returns how many runs were deleted.
    """
    t = _TABLE.c
    deleted = 0
    with db.begin() as conn:
        if max_age_days > 0:
            cutoff = (now or utcnow()) - datetime.timedelta(days=max_age_days)
            old = conn.execute(
                sa.select(t.run, t.node_uuid)
                .where(t.finished_at < cutoff)
                .order_by(t.finished_at)
                .limit(batch)
            ).all()
            current = _current_runs(conn, {row.node_uuid for row in old})
            deleted += _delete(conn, [r.run for r in old if r.run not in current])
        # nodes with more runs than kept, from where the last pass stopped
        nodes_per_pass = max(1, batch // (keep_runs + 1))
        counted = conn.execute(
            sa.select(t.node_uuid, sa.func.count().label("runs"))
            .where(t.node_uuid > pruning.after_node)
            .group_by(t.node_uuid)
            .order_by(t.node_uuid)
            .limit(nodes_per_pass)
        ).all()
        over = {row.node_uuid for row in counted if row.runs > keep_runs}
        current = _current_runs(conn, over)
        walked, whole = "", len(counted) < nodes_per_pass
        for row in counted:
            if row.node_uuid in over:
                room = batch - deleted
                if room <= 0:
                    whole = False
                    break
                beyond = conn.execute(
                    sa.select(t.run)
                    .where(t.node_uuid == row.node_uuid)
                    .order_by(t.finished_at.desc(), t.run.desc())
                    .offset(keep_runs)
                    .limit(room + 1)
                ).scalars()
                runs = [run for run in beyond if run not in current]
                deleted += _delete(conn, runs[:room])
                if len(runs) > room:  # more of this node next time
                    whole = False
                    break
            walked = row.node_uuid
        # the next pass goes on after the last node done; from the start
        # once every node was looked at
        pruning.after_node = "" if whole else walked
    pruning.deleted = deleted
    return deleted
