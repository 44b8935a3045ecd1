"""Ironic's own inspections in the hardware history: which of them are
recorded (``ironic_inspections``, one row per node), and the one write
that records a new one (the run, the node's latest record, and the row).

One inspection is recorded once whichever way it arrives: a poll sees
Ironic's ``inspection_started_at`` and ``inspection_finished_at``, the
hook's push (during the inspection) the start only. :func:`record`
compares them with the node's row and swaps it in the same transaction as
the run's insert, so two writers (the leader's poll and an API process
taking a push, or two leaders across a change) never both record it.
"""

import dataclasses
import datetime
import logging
from collections.abc import Iterable
from typing import Any, cast

import sqlalchemy as sa

from inspector import exceptions, states
from inspector.db import hardware_runs, introspections, models
from inspector.db.engine import Database
from inspector.db.models import utcnow

LOG = logging.getLogger(__name__)

_TABLE = cast(sa.Table, models.IronicInspection.__table__)
_NODES = cast(sa.Table, models.Introspection.__table__)


@dataclasses.dataclass(frozen=True)
class Inspection:
    """One inspection Ironic made of a node, as far as its times tell."""

    node_uuid: str
    started_at: datetime.datetime | None
    finished_at: datetime.datetime | None
    """None: still running (a push from inside it)."""

    def same_as(self, row: Any) -> bool:
        """Whether ``row`` (of ``ironic_inspections``) recorded this one."""
        if row is None:
            return False
        if self.started_at is not None and row.started_at == self.started_at:
            return True
        return self.finished_at is not None and row.finished_at == self.finished_at


_ROW = sa.select(_TABLE).where(_TABLE.c.node_uuid == sa.bindparam("node"))


def seen(db: Database, nodes: Iterable[str]) -> dict[str, Inspection]:
    """The inspection last recorded of each of ``nodes`` that has one."""
    found: dict[str, Inspection] = {}
    wanted = sorted(set(nodes))
    with db.connect() as conn:
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            query = sa.select(_TABLE).where(_TABLE.c.node_uuid.in_(chunk))
            for row in conn.execute(query):
                found[row.node_uuid] = Inspection(
                    row.node_uuid, row.started_at, row.finished_at
                )
    return found


def seen_all(db: Database) -> dict[str, Inspection]:
    """Every node's last recorded inspection (a whole scan compares the
    whole node list with it: some hundreds of KiB at 10,000 nodes)."""
    with db.connect() as conn:
        return {
            row.node_uuid: Inspection(row.node_uuid, row.started_at, row.finished_at)
            for row in conn.execute(sa.select(_TABLE))
        }


def newest(db: Database, count: int) -> list[Inspection]:
    """The ``count`` inspections recorded that finished last, newest first
    (the poll's marker candidates)."""
    query = (
        sa.select(_TABLE)
        .where(_TABLE.c.finished_at.is_not(None))
        .order_by(_TABLE.c.finished_at.desc(), _TABLE.c.node_uuid.desc())
        .limit(count)
    )
    with db.connect() as conn:
        return [
            Inspection(row.node_uuid, row.started_at, row.finished_at)
            for row in conn.execute(query)
        ]


def count(db: Database) -> int:
    """How many nodes have an inspection of Ironic's recorded."""
    with db.connect() as conn:
        return int(
            conn.execute(sa.select(sa.func.count()).select_from(_TABLE)).one()[0]
        )


def _swap(
    conn: sa.Connection, inspection: Inspection, row: Any, run: str | None
) -> bool:
    """The node's row set to ``inspection``, compared with ``row`` as read
    (None: there was none); False when another writer got there first."""
    values = {
        "started_at": inspection.started_at,
        "finished_at": inspection.finished_at,
        "run": run,
        "recorded_at": utcnow(),
    }
    if row is None:
        try:
            with conn.begin_nested():
                conn.execute(
                    sa.insert(_TABLE), {"node_uuid": inspection.node_uuid, **values}
                )
        except sa.exc.IntegrityError:
            return False
        return True
    t = _TABLE.c
    update = (
        sa.update(_TABLE)
        .where(
            t.node_uuid == inspection.node_uuid,
            t.recorded_at == row.recorded_at,
            t.started_at.is_not_distinct_from(row.started_at),
            t.finished_at.is_not_distinct_from(row.finished_at),
        )
        .values(values)
    )
    return bool(conn.execute(update).rowcount == 1)


def ended_push(db: Database, inspection: Inspection) -> bool:
    """A poll (or a notification) saw ``inspection`` ended: Ironic clears
    a node's ``inspection_started_at`` when its inspection ends well, so
    the poll knows the finish only. When the node's row is a push's (a
    start, no finish) from no later than that finish, that inspection is
    the one that ended: the row takes the finish (the marker moves on) and
    nothing more is recorded; True when it was that case.

    (Were the pushed inspection followed, within one poll interval, by
    another whose push has not arrived yet, the finish is the later one's;
    that push, resent from the hook's spool, is recorded when it arrives.)
    """
    if inspection.finished_at is None:
        return False
    with db.begin() as conn:
        row = conn.execute(_ROW, {"node": inspection.node_uuid}).first()
        if row is None or row.finished_at is not None or row.started_at is None:
            return False
        if row.started_at > inspection.finished_at:
            return False
        ended = Inspection(inspection.node_uuid, row.started_at, inspection.finished_at)
        return _swap(conn, ended, row, row.run)


def skip(db: Database, inspection: Inspection) -> bool:
    """Mark ``inspection`` as seen without a run (its inventory could not
    be read for good: deleted, refused, not an inventory), so a poll goes
    past it; False if it was recorded already."""
    with db.begin() as conn:
        row = conn.execute(_ROW, {"node": inspection.node_uuid}).first()
        if inspection.same_as(row):
            return False
        return _swap(conn, inspection, row, None)


def _latest_of_node(
    conn: sa.Connection,
    run: hardware_runs.Run,
    started: datetime.datetime | None,
    finished: datetime.datetime,
) -> None:
    """The node's status row points at ``run`` (its latest record), and
    says finished at Ironic's finish when it is not running one of ours;
    a node never introspected here gets a row (the fleet view lists it)."""
    row = introspections.locked(conn, run.node_uuid)
    if row is None:
        introspections.insert(
            conn,
            {
                "uuid": run.node_uuid,
                "state": states.FINISHED,
                "version": 1,
                "started_at": started or finished,
                "finished_at": finished,
                "error": None,
                "manage_boot": False,
                "hardware_run": run.run,
            },
        )
        return
    if row.state not in states.FINAL:
        return  # ours is running: its end points the row at its own run
    introspections.compare_and_swap(
        conn,
        run.node_uuid,
        row.version,
        {
            "state": states.FINISHED,
            "started_at": started or finished,
            "finished_at": finished,
            "error": None,
            "hardware_run": run.run,
        },
    )


def record(db: Database, inspection: Inspection, run: hardware_runs.Run) -> bool:
    """Record ``run`` (with its record) as Ironic's ``inspection`` of the
    node, unless that inspection is recorded already; True if recorded.

    In one transaction: the row compared and swapped, the run inserted,
    the node's status row pointed at it (see :func:`_latest_of_node`).

    :raises DatabaseUnavailable: the database cannot be reached.
    """
    for _attempt in range(3):
        try:
            with db.begin() as conn:
                row = conn.execute(_ROW, {"node": inspection.node_uuid}).first()
                if inspection.same_as(row):
                    return False
                if not _swap(conn, inspection, row, run.run):
                    continue  # another writer: read again
                # Ironic's finish; a push's: now (the inspection ends soon)
                finished = inspection.finished_at or utcnow()
                run.started_at = run.started_at or inspection.started_at or finished
                hardware_runs.insert(conn, run, finished, states.FINISHED)
                _latest_of_node(conn, run, inspection.started_at, finished)
                return True
        except exceptions.StaleState:
            continue  # the status row moved under us: read again
    LOG.warning(
        "Node %s: Ironic's inspection finished at %s was not recorded: "
        "other writers kept changing the node's rows",
        inspection.node_uuid,
        inspection.finished_at,
    )
    return False


_POLLS = cast(sa.Table, models.IronicFollowPoll.__table__)


@dataclasses.dataclass(frozen=True)
class PollState:
    """The follower's last poll, as ``/metrics`` shows it."""

    host: str
    polled_at: datetime.datetime | None
    failed_at: datetime.datetime | None
    error: str | None
    lag: float | None


def note_poll(
    db: Database,
    host: str,
    error: str | None = None,
    lag: float | None = None,
) -> None:
    """The poll just made by ``host``: ended (``error`` None, with its
    ``lag``) or stopped early with ``error``. Best effort: a database
    outage is the poll's own failure, logged by the caller."""
    now = utcnow()
    values: dict[str, Any] = {"host": host}
    if error is None:
        values.update(polled_at=now, failed_at=None, error=None, lag=lag)
    else:
        values.update(failed_at=now, error=error[:2000])
    with db.begin() as conn:
        changed = conn.execute(
            sa.update(_POLLS).where(_POLLS.c.name == "poll").values(values)
        ).rowcount
        if not changed:
            conn.execute(sa.insert(_POLLS), {"name": "poll", **values})


def poll_state(db: Database) -> PollState | None:
    """The last poll noted; None when the follower never polled."""
    with db.connect() as conn:
        row = conn.execute(sa.select(_POLLS).where(_POLLS.c.name == "poll")).first()
    if row is None:
        return None
    return PollState(row.host, row.polled_at, row.failed_at, row.error, row.lag)
