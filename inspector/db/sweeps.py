"""The periodic reads over many introspections: the steps conductors own,
the introspections past their timeout, the Ironic writes still owed, the
counts by state. Each reads the few rows it wants through an index."""

import datetime
from collections.abc import Iterable
from typing import cast

import sqlalchemy as sa

from inspector import states
from inspector.db import models
from inspector.db.engine import Database
from inspector.db.introspections import IntrospectionRecord, record_of

_TABLE = cast(sa.Table, models.Introspection.__table__)
_WORKING = sa.select(_TABLE).where(_TABLE.c.state.in_(sorted(states.WORKING)))
_TIMED_OUT = sa.select(_TABLE).where(
    _TABLE.c.state.in_(sorted(states.TRANSIENT)),
    _TABLE.c.started_at < sa.bindparam("before"),
)
_OWING = sa.select(_TABLE).where(_TABLE.c.owed_writes.is_not(None))


def working(db: Database) -> list[IntrospectionRecord]:
    """Every introspection whose next step belongs to a conductor.

    Each conductor reads these every [coordination]sweep_interval, as many
    as nodes are being worked on.
    """
    with db.connect() as conn:
        return [record_of(row) for row in conn.execute(_WORKING)]


def timed_out(
    db: Database, started_before: datetime.datetime
) -> list[IntrospectionRecord]:
    """Running introspections started before the given time."""
    with db.connect() as conn:
        rows = conn.execute(_TIMED_OUT, {"before": started_before})
        return [record_of(row) for row in rows]


def owing(db: Database) -> list[IntrospectionRecord]:
    """Finished introspections with Ironic writes still owed."""
    with db.connect() as conn:
        return [record_of(row) for row in conn.execute(_OWING)]


def count_by_state(db: Database, only: Iterable[str] | None = None) -> dict[str, int]:
    """How many nodes are in each state (one row per node), for the states
    in ``only`` when given: then the count reads only their part of the
    state index, as long as the work in them, not the history."""
    query = sa.select(_TABLE.c.state, sa.func.count()).group_by(_TABLE.c.state)
    if only is not None:
        query = query.where(_TABLE.c.state.in_(sorted(only)))
    with db.connect() as conn:
        return {state: count for state, count in conn.execute(query)}
