"""The fleet view's reads: the snapshot of the join, its cache and the
fingerprint that tells when the view changed."""

import datetime
import uuid as uuidlib
from typing import Any

import sqlalchemy as sa

from inspector.db import engine, fleet, models
from inspector.fleet import facts
from lab import fleet_rows
from tests.unit.db.statements import recorded


def _node(db: engine.Database, node: str | None = None, **kwargs: Any) -> str:
    node = node or str(uuidlib.uuid4())
    memory = kwargs.pop("memory_mb", 262144)
    record = fleet_rows.machine(memory_mb=memory)
    fleet_rows.insert(db, [fleet_rows.run_row(node, record, **kwargs)])
    return node


def test_the_facts_are_the_pure_modules() -> None:
    assert fleet.FACTS == facts.FACTS
    assert fleet.INTEGER_FACTS == facts.INTEGER_FACTS


def test_the_snapshot_is_the_latest_run_of_each_node(db: engine.Database) -> None:
    node = str(uuidlib.uuid4())
    old = fleet_rows.run_row(
        node,
        fleet_rows.machine(memory_mb=131072),
        name="n",
        finished_at=datetime.datetime(2026, 1, 1),
    )
    new = fleet_rows.run_row(node, fleet_rows.machine(), name="n")
    fleet_rows.insert(db, [old, new])
    other = _node(db)
    with db.begin() as conn:  # a node never introspected since the history
        conn.execute(
            sa.insert(fleet_rows.NODES),
            {
                "uuid": str(uuidlib.uuid4()),
                "state": "finished",
                "version": 1,
                "started_at": models.utcnow(),
                "manage_boot": True,
            },
        )
    seen = fleet.snapshot(db)
    assert sorted(n["uuid"] for n in seen.facts) == sorted([node, other])
    mine = next(n for n in seen.facts if n["uuid"] == node)
    assert mine["memory_mb"] == 262144
    assert mine["finished_at"] == new["finished_at"].isoformat()


def test_the_cache_answers_until_the_view_changes(db: engine.Database) -> None:
    first = _node(db)
    calls = []

    def compute() -> list[int]:
        calls.append(1)
        return sorted(n["memory_mb"] for n in fleet.snapshot(db).facts)

    assert fleet.cached(db, "count", compute) == [262144]
    statements = recorded(db)
    assert fleet.cached(db, "count", compute) == [262144]
    assert len(calls) == 1 and statements == ["SELECT"]  # the fingerprint only
    _node(db, memory_mb=131072)
    assert fleet.cached(db, "count", compute) == [131072, 262144]
    # a run committed after a newer one (it finished earlier) still shows
    earlier = models.utcnow() - datetime.timedelta(minutes=5)
    _node(db, first, memory_mb=65536, finished_at=earlier)
    assert fleet.cached(db, "count", compute) == [65536, 131072]
    # a node whose status row goes (deleted from Ironic) too
    with db.begin() as conn:
        conn.execute(
            sa.delete(fleet_rows.NODES).where(
                fleet_rows.NODES.c.uuid.in_(sa.select(fleet_rows.NODES.c.uuid).limit(1))
            )
        )
    assert len(fleet.cached(db, "count", compute)) == 1
    assert len(calls) == 4


def _memories(view: fleet.Snapshot) -> list[int]:
    return sorted(n["memory_mb"] for n in view.facts)


def test_the_current_view_is_read_again_from_the_one_before(
    db: engine.Database,
) -> None:
    first = _node(db)
    assert _memories(fleet.current(db)) == [262144]
    statements = recorded(db)
    assert _memories(fleet.current(db)) == [262144]
    assert statements == ["SELECT"]  # the fingerprint
    second = _node(db, memory_mb=131072)
    statements.clear()
    view = fleet.current(db)
    assert _memories(view) == [131072, 262144]
    # the fingerprint, the runs since the view before, the count
    assert statements == ["SELECT", "SELECT", "SELECT"]
    assert sorted(n["uuid"] for n in view.facts) == sorted([first, second])
    earlier = models.utcnow() - datetime.timedelta(minutes=5)
    _node(db, first, memory_mb=65536, finished_at=earlier)
    assert _memories(fleet.current(db)) == [65536, 131072]
    with db.begin() as conn:  # a node gone: the whole view is read again
        conn.execute(
            sa.delete(fleet_rows.NODES).where(fleet_rows.NODES.c.uuid == first)
        )
    statements.clear()
    assert _memories(fleet.current(db)) == [131072]
    assert statements == ["SELECT", "SELECT", "SELECT", "SELECT"]
