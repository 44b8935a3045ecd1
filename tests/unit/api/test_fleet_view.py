"""The fleet view an API process holds: one statement while nothing
changed, the changed nodes' rows after a run, the nodes listed when one
went, and the whole view again in the background as a safety net."""

import concurrent.futures
import datetime
import threading
import uuid as uuidlib
from typing import Any

import pytest
import sqlalchemy as sa

from inspector.api import fleet_view
from inspector.db import engine, fleet, models
from lab.machines import fleet_rows
from lab.waiting import wait_until
from tests.unit.db.statements import recorded


def _run(db: engine.Database, node: str | None = None, **kwargs: Any) -> str:
    node = node or str(uuidlib.uuid4())
    record = fleet_rows.machine(memory_mb=kwargs.pop("memory_mb", 262144))
    fleet_rows.insert(db, [fleet_rows.run_row(node, record, **kwargs)])
    return node


def _memories(held: fleet_view.HeldFleet) -> dict[str, int]:
    return held.view(lambda live: {n["uuid"]: n["memory_mb"] for n in live.facts()})


def test_the_view_follows_the_runs(db: engine.Database) -> None:
    first = _run(db)
    held = fleet_view.HeldFleet(db)
    calls: list[int] = []

    def compute() -> dict[str, int]:
        calls.append(1)
        return _memories(held)

    assert held.cached("memories", compute) == {first: 262144}
    statements = recorded(db)
    assert held.cached("memories", compute) == {first: 262144}
    assert statements == ["SELECT"] and len(calls) == 1  # the fingerprint
    second = _run(db, memory_mb=131072)
    statements.clear()
    assert held.cached("memories", compute) == {first: 262144, second: 131072}
    # the fingerprint, the runs since the read before, their nodes' rows,
    # those of them that changed something, the count
    assert statements == ["SELECT"] * 5
    # a run committed after a newer one (it finished earlier) still shows
    earlier = models.utcnow() - datetime.timedelta(minutes=5)
    _run(db, first, memory_mb=65536, finished_at=earlier)
    assert held.cached("memories", compute)[first] == 65536
    with db.begin() as conn:  # a node gone (deleted from Ironic)
        conn.execute(
            sa.delete(fleet_rows.NODES).where(fleet_rows.NODES.c.uuid == first)
        )
    statements.clear()
    assert held.cached("memories", compute) == {second: 131072}
    # the fingerprint, the runs (none new), the count, and the nodes with
    # a record listed: not the whole view read
    assert statements == ["SELECT", "SELECT", "SELECT", "SELECT"]
    assert len(calls) == 4


def test_the_whole_view_is_read_again_in_the_background(db: engine.Database) -> None:
    node = _run(db)
    held = fleet_view.HeldFleet(db)
    assert _memories(held) == {}
    held.sync()
    assert _memories(held) == {node: 262144}
    # changed behind the service's back, where the fingerprint cannot see
    # (no run ended, no node came or went)
    with db.begin() as conn:
        conn.execute(sa.update(fleet_rows.RUNS).values(memory_mb=1024))
    held.sync()
    assert _memories(held) == {node: 262144}
    held.full_read_interval = 0.0
    held.sync()  # answers at once; the whole read runs beside it
    wait_until(
        lambda: _memories(held),
        10,
        "the whole view read again",
        until=lambda seen: seen == {node: 1024},
    )


def test_the_newest_changes_follow_the_runs(db: engine.Database) -> None:
    change = fleet_rows.change("memory", "changed", "total_mb", 1, 2)
    nodes = [_run(db, changes=[change]) for _ in range(3)]
    held = fleet_view.HeldFleet(db)
    held.sync()
    assert held.recent_changes(2) == fleet.recent_changes(db, 2)
    for index in range(4):
        # a run with changes, one without, one of a node written late
        later = models.utcnow() - datetime.timedelta(minutes=index)
        _run(db, nodes[index % 3], changes=[change] if index % 2 else [])
        _run(db, changes=[change], finished_at=later)
        held.sync()
        statements = recorded(db)
        assert held.recent_changes(2) == fleet.recent_changes(db, 2)
        assert len(statements) == 1  # only the check above: kept, not read
    assert held.recent_changes(5) == fleet.recent_changes(db, 5)


def test_the_whole_read_lets_requests_in_between_chunks(
    db: engine.Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    nodes = sorted(_run(db) for _ in range(6))
    held = fleet_view.HeldFleet(db)
    held.sync()
    with db.begin() as conn:  # behind the service's back, as above
        conn.execute(sa.update(fleet_rows.RUNS).values(memory_mb=1024))
    between: list[dict[str, int]] = []
    chunks = fleet.whole_in_chunks

    def watched(db: engine.Database, size: int = fleet.CHUNK) -> Any:
        for chunk in chunks(db, 2):
            yield chunk
            # back in the reader, after the chunk was applied: nothing is
            # held, a request reads the view as it is now
            assert held._guard.acquire(blocking=False)
            held._guard.release()
            assert held._reading.acquire(blocking=False)
            held._reading.release()
            between.append(_memories(held))

    monkeypatch.setattr(fleet, "whole_in_chunks", watched)
    held._read_whole()
    assert len(between) == 3
    assert sorted(u for u, m in between[0].items() if m == 1024) == nodes[:2]
    assert sorted(u for u, m in between[1].items() if m == 1024) == nodes[:4]
    assert set(between[2].values()) == {1024}
    assert _memories(held) == dict.fromkeys(nodes, 1024)


def test_the_whole_read_waits_for_the_requests_in_flight(
    db: engine.Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    for _ in range(4):
        _run(db)
    held = fleet_view.HeldFleet(db)
    held.sync()
    monkeypatch.setattr(fleet_view, "YIELD_AT_MOST", 30.0)
    asked: list[int] = []
    chunks = fleet.whole_in_chunks

    def watched(db: engine.Database, size: int = fleet.CHUNK) -> Any:
        for chunk in chunks(db, 2):
            asked.append(len(chunk))
            yield chunk

    monkeypatch.setattr(fleet, "whole_in_chunks", watched)
    waiting, answering, release = (threading.Event() for _ in range(3))
    wait_for_quiet = held._wait_for_quiet

    def wait() -> None:
        waiting.set()
        wait_for_quiet()

    monkeypatch.setattr(held, "_wait_for_quiet", wait)

    def compute() -> str:
        answering.set()
        assert release.wait(30)
        return "answer"

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        request = pool.submit(held.cached, "key", compute)
        assert answering.wait(30)
        reader = pool.submit(held._read_whole)
        assert waiting.wait(30)
        # between its first two chunks, with a request in flight: it waits
        # (for 30 s here), and reads nothing more meanwhile
        assert asked == [2] and not reader.done()
        release.set()
        assert request.result(30) == "answer"
        reader.result(30)
    assert asked == [2, 2]


def test_a_whole_read_that_found_nothing_costs_requests_nothing(
    db: engine.Database,
) -> None:
    change = fleet_rows.change("memory", "changed", "total_mb", 1, 2)
    node = _run(db, changes=[change])
    pruned = _run(db, changes=[change])
    held = fleet_view.HeldFleet(db)
    held.sync()
    assert [r["uuid"] for r in held.recent_changes(5)] == [pruned, node]
    held._read_whole()  # nothing differs
    statements = recorded(db)
    assert held.recent_changes(5)[1]["uuid"] == node
    held.sync()
    assert statements == ["SELECT"]  # the fingerprint: nothing read again
    # a run on the page pruned (here: its node's newest run, for brevity)
    with db.begin() as conn:
        conn.execute(
            sa.delete(fleet_rows.RUNS).where(fleet_rows.RUNS.c.node_uuid == pruned)
        )
    held._read_whole()
    assert [r["uuid"] for r in held.recent_changes(5)] == [node]


def _named_by_facts(held: fleet_view.HeldFleet) -> dict[str, list[str]]:
    """The index of names as a pass over every node's facts builds it."""
    found: dict[str, list[str]] = {}
    for node in held.view(lambda live: live.facts()):
        if node.get("name"):
            found.setdefault(node["name"], []).append(node["uuid"])
    return found


def _named(held: fleet_view.HeldFleet) -> dict[str, list[str]]:
    return {name: sorted(nodes) for name, nodes in held._named.items()}


def test_the_names_follow_the_runs_node_by_node(db: engine.Database) -> None:
    first = _run(db, name="rack1-a")
    held = fleet_view.HeldFleet(db)
    assert held.named("rack1-a") == [first]
    # a new node: found once its run is read, with no pass over the fleet
    second = _run(db, name="rack1-b")
    assert held.named("rack1-b") == [second]
    assert held.named("rack1-a") == [first]
    # renamed: a run records the new name, the old one finds nothing
    _run(db, first, name="rack2-a")
    assert held.named("rack2-a") == [first]
    assert held.named("rack1-a") == []
    # a run that keeps the name
    _run(db, second, name="rack1-b", memory_mb=131072)
    assert held.named("rack1-b") == [second]
    # two nodes last seen with one name: both (the page asks for a UUID)
    third = _run(db, name="rack2-a")
    assert held.named("rack2-a") == sorted([first, third])
    # a run without a name: the node is not found by its old one
    _run(db, third)
    assert held.named("rack2-a") == [first]
    assert _named(held) == _named_by_facts(held)
    # a node gone (deleted from Ironic)
    with db.begin() as conn:
        conn.execute(
            sa.delete(fleet_rows.NODES).where(fleet_rows.NODES.c.uuid == first)
        )
    assert held.named("rack2-a") == []
    assert _named(held) == _named_by_facts(held) == {"rack1-b": [second]}
    assert held.named("") == []


def test_the_names_follow_the_whole_read(db: engine.Database) -> None:
    nodes = sorted(_run(db, name=f"n-{index}") for index in range(3))
    held = fleet_view.HeldFleet(db)
    assert held.named("n-0") != []
    # renamed behind the service's back (no run ended): the whole read
    # finds it, and the index follows
    with db.begin() as conn:
        conn.execute(
            sa.update(fleet_rows.RUNS)
            .where(fleet_rows.RUNS.c.node_uuid == nodes[0])
            .values(node_name="renamed")
        )
    held._read_whole()
    assert held.named("renamed") == [nodes[0]]
    assert _named(held) == _named_by_facts(held)
    assert len(_named(held)) == 3


def test_a_name_is_looked_up_without_a_pass_over_the_fleet(
    db: engine.Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    _run(db, name="old")
    held = fleet_view.HeldFleet(db)
    held.sync()  # the first read is whole

    def every_node() -> Any:
        raise AssertionError("the names were built over every node's facts")

    monkeypatch.setattr(held._live, "facts", every_node)
    node = _run(db, name="fresh")
    assert held.named("fresh") == [node]
    assert held.named("old") != []
