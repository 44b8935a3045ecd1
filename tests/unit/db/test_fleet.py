"""The fleet view's reads: the snapshot of the join, its cache and the
fingerprint that tells when the view changed."""

import datetime
import uuid as uuidlib
from typing import Any

import sqlalchemy as sa

from inspector.db import engine, fleet, models
from inspector.fleet import queries
from lab.machines import fleet_rows
from tests.unit.db.statements import recorded


def _node(db: engine.Database, node: str | None = None, **kwargs: Any) -> str:
    node = node or str(uuidlib.uuid4())
    memory = kwargs.pop("memory_mb", 262144)
    record = fleet_rows.machine(memory_mb=memory)
    fleet_rows.insert(db, [fleet_rows.run_row(node, record, **kwargs)])
    return node


def test_the_facts_are_the_pure_modules() -> None:
    assert fleet.FACTS == queries.FACTS
    assert fleet.INTEGER_FACTS == queries.INTEGER_FACTS


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


def test_the_whole_view_in_chunks(db: engine.Database) -> None:
    nodes = sorted(_node(db) for _ in range(7))
    _node(db, nodes[2], memory_mb=65536)  # a second run: still one entry
    with db.begin() as conn:  # a node without a record is not in the view
        conn.execute(
            sa.insert(fleet_rows.NODES),
            {
                "uuid": "0" * 8 + "-0000-0000-0000-" + "0" * 12,
                "state": "starting",
                "version": 1,
                "started_at": models.utcnow(),
                "manage_boot": True,
            },
        )
    statements = recorded(db)
    chunks = list(fleet.whole_in_chunks(db, 3))
    assert [list(chunk) for chunk in chunks] == [nodes[:3], nodes[3:6], nodes[6:]]
    assert statements == ["SELECT"] * 3  # the last chunk, short, ends it
    assert chunks[0][nodes[2]][0]["memory_mb"] == 65536
    whole = fleet.read_changes(db).nodes
    assert {u: e for chunk in chunks for u, e in chunk.items()} == whole
    statements.clear()
    assert len(list(fleet.whole_in_chunks(db, 7))) == 1
    assert statements == ["SELECT", "SELECT"]  # a full chunk: one more look


def _memories(delta: fleet.Delta) -> dict[str, int]:
    return {u: facts["memory_mb"] for u, (facts, _links) in delta.nodes.items()}


def test_the_changes_since_a_read(db: engine.Database) -> None:
    first = _node(db)
    whole = fleet.read_changes(db)
    assert whole.whole and _memories(whole) == {first: 262144} and not whole.gone
    second = _node(db, memory_mb=131072)
    statements = recorded(db)
    delta = fleet.read_changes(db, whole.read_at, [first], whole.runs)
    # the runs since the read before (less an hour), the rows of their
    # nodes, those of them that changed something, and the count
    assert statements == ["SELECT", "SELECT", "SELECT", "SELECT"]
    assert not delta.whole and not delta.gone
    assert _memories(delta)[second] == 131072
    # a run committed after a newer one (it finished earlier) still shows
    earlier = models.utcnow() - datetime.timedelta(minutes=5)
    _node(db, first, memory_mb=65536, finished_at=earlier)
    delta = fleet.read_changes(db, delta.read_at, [first, second], delta.runs)
    assert set(delta.nodes) == {first}  # only the node of the new run
    assert _memories(delta)[first] == 65536
    # a node gone (deleted from Ironic): the nodes with a record listed
    with db.begin() as conn:
        conn.execute(
            sa.delete(fleet_rows.NODES).where(fleet_rows.NODES.c.uuid == first)
        )
    statements.clear()
    delta = fleet.read_changes(db, delta.read_at, [first, second], delta.runs)
    assert delta.gone == {first} and not delta.nodes
    # the runs (none new), the count, the nodes with a record
    assert statements == ["SELECT", "SELECT", "SELECT"]


def test_a_node_not_held_and_not_recent_is_read(db: engine.Database) -> None:
    old = _node(db, finished_at=datetime.datetime(2026, 1, 1))
    new = _node(db)
    delta = fleet.read_changes(db, models.utcnow(), [new])
    assert old in delta.nodes and not delta.gone
