"""The hardware history: the run written with the finishing write, the
per-node pages, and the bounded pruning."""

import datetime
import json
from typing import Any, cast

import pytest
import sqlalchemy as sa

from inspector import exceptions
from inspector.db import engine, hardware_runs, introspections, models, transitions
from tests.unit.db import statements

UUID = "11111111-2222-4333-8444-555555555555"
BASE = datetime.datetime(2026, 1, 1)
TABLE = cast(sa.Table, models.HardwareRun.__table__)
RECORD = {"memory": {"total_mb": 1024}, "disks": {}, "nics": {}}
CHANGE = {
    "component": "memory",
    "kind": "changed",
    "field": "total_mb",
    "before": 2048,
    "after": 1024,
}


def _finish(
    db: engine.Database, run: hardware_runs.Run
) -> introspections.IntrospectionRecord:
    introspections.start(db, run.node_uuid, True)
    record = transitions.waiting(db, introspections.get(db, run.node_uuid))
    record = transitions.posted(db, introspections.get(db, run.node_uuid), {})
    return transitions.finished(db, record, run)


def _seed(db: engine.Database, node: str, count: int, **values: Any) -> list[str]:
    """``count`` runs of ``node``, a minute apart (two share each minute:
    the run's UUID breaks the tie), oldest first."""
    rows = [
        {
            "run": f"{node[:8]}-0000-4000-8000-{index:012}",
            "node_uuid": node,
            "started_at": BASE,
            "finished_at": BASE + datetime.timedelta(minutes=index // 2),
            "state": "finished",
            "change_count": 1,
            "changes": json.dumps([{**CHANGE, "run": f"r{index}"}]),
            **values,
        }
        for index in range(count)
    ]
    with db.begin() as conn:
        conn.execute(sa.insert(TABLE), rows)
    return [row["run"] for row in rows]


def test_finishing_write_records_the_run_and_moves_hardware_run(
    db: engine.Database,
) -> None:
    run = hardware_runs.new_run(UUID)
    run.record, run.changes, run.change_count = RECORD, [CHANGE], 1
    run.facts = {"memory_mb": 1024, "vendor": "ACME", "unknown": 1}
    run.links = [{"mac": "aa:bb:cc:dd:ee:ff", "pxe": True}]
    run.node_name = "node-1"
    finished = _finish(db, run)
    assert finished.hardware_run == run.run
    assert hardware_runs.get_record(db, run.run) == RECORD
    with db.connect() as conn:
        row = conn.execute(sa.select(TABLE)).one()
    assert row.state == "finished" and row.node_name == "node-1"
    assert row.memory_mb == 1024 and row.vendor == "ACME" and row.cpus is None
    assert row.started_at == finished.started_at
    assert row.finished_at == finished.finished_at
    assert json.loads(row.changes) == [
        {**CHANGE, "run": run.run, "finished_at": finished.finished_at.isoformat()}
    ]
    assert json.loads(row.links) == run.links
    # a new start keeps the node's latest record
    assert introspections.start(db, UUID, True).hardware_run == run.run


def test_the_run_costs_one_insert(db: engine.Database) -> None:
    introspections.start(db, UUID, True)
    transitions.waiting(db, introspections.get(db, UUID))
    record = transitions.posted(db, introspections.get(db, UUID), {})
    seen = statements.recorded(db)
    transitions.finished(db, record, hardware_runs.new_run(UUID))
    with_run = list(seen)
    assert with_run.count("INSERT") == 1
    introspections.start(db, UUID, True)
    transitions.waiting(db, introspections.get(db, UUID))
    record = transitions.posted(db, introspections.get(db, UUID), {})
    seen.clear()
    transitions.finished(db, record)
    assert len(with_run) == len(seen) + 1


def test_error_run_keeps_no_record_and_leaves_hardware_run(
    db: engine.Database,
) -> None:
    good = hardware_runs.new_run(UUID)
    good.record = RECORD
    _finish(db, good)
    introspections.start(db, UUID, True)
    failed = transitions.failed(
        db, introspections.get(db, UUID), "boom", hardware_runs.new_run(UUID)
    )
    assert failed.hardware_run == good.run
    newest = hardware_runs.history(db, UUID, limit=10)[0]
    assert (newest.state, newest.error, newest.changes) == ("error", "boom", 0)
    assert newest.uuid != good.run


def test_finished_run_without_record_leaves_hardware_run(db: engine.Database) -> None:
    """Ironic was away before the data could be processed: the run is in
    the history, the record the fleet view shows stays the one before."""
    good = hardware_runs.new_run(UUID)
    good.record = RECORD
    _finish(db, good)
    assert _finish(db, hardware_runs.new_run(UUID)).hardware_run == good.run


def test_history_pages_newest_first(db: engine.Database) -> None:
    runs = _seed(db, UUID, 7)
    _seed(db, "99999999-2222-4333-8444-555555555555", 3)
    seen: list[str] = []
    marker = None
    while True:
        page = hardware_runs.history(db, UUID, limit=3, marker=marker)
        assert len(page) <= 3
        if not page:
            break
        seen += [entry.uuid for entry in page]
        marker = page[-1].uuid
    assert seen == runs[::-1]


def test_bad_marker_is_invalid_input(db: engine.Database) -> None:
    other = _seed(db, "99999999-2222-4333-8444-555555555555", 1)[0]
    _seed(db, UUID, 1)
    for marker in ("nope", other):  # unknown, or another node's run
        with pytest.raises(exceptions.InvalidInput) as err:
            hardware_runs.history(db, UUID, limit=3, marker=marker)
        assert marker in str(err.value) and err.value.code == 400
        with pytest.raises(exceptions.InvalidInput):
            hardware_runs.changes(db, UUID, limit=3, marker=marker)


def test_changes_page_whole_runs(db: engine.Database) -> None:
    runs = _seed(db, UUID, 5)
    with db.begin() as conn:  # the newest run changed 3 components, one none
        conn.execute(
            sa.update(TABLE)
            .where(TABLE.c.run == runs[-1])
            .values(change_count=3, changes=json.dumps([CHANGE] * 3))
        )
        conn.execute(
            sa.update(TABLE)
            .where(TABLE.c.run == runs[-2])
            .values(change_count=0, changes="[]")
        )
    first, marker = hardware_runs.changes(db, UUID, limit=4)
    assert len(first) == 4 and marker == runs[-3]  # 3 + 1, the next whole
    second, marker = hardware_runs.changes(db, UUID, limit=4, marker=marker)
    assert [c["run"] for c in second] == ["r1", "r0"] and marker is None
    # a run bigger than the page comes whole
    alone, marker = hardware_runs.changes(db, UUID, limit=2)
    assert len(alone) == 3 and marker == runs[-1]


def test_prune_keeps_the_newest_runs_and_the_current_one(db: engine.Database) -> None:
    runs = _seed(db, UUID, 30)
    with db.begin() as conn:
        conn.execute(
            sa.insert(cast(sa.Table, models.Introspection.__table__)).values(
                uuid=UUID,
                state="finished",
                version=1,
                started_at=BASE,
                manage_boot=True,
                hardware_run=runs[0],  # the oldest: every later run failed
            )
        )
    pruning = hardware_runs.Pruning()
    deleted = hardware_runs.prune(db, pruning, keep_runs=20, max_age_days=0, batch=100)
    assert deleted == 9
    left = [entry.uuid for entry in hardware_runs.history(db, UUID, limit=100)]
    assert left == runs[10:][::-1] + [runs[0]]


def test_prune_is_bounded_and_goes_on_where_it_stopped(db: engine.Database) -> None:
    nodes = [f"{i:08}-2222-4333-8444-555555555555" for i in range(6)]
    for node in nodes:
        _seed(db, node, 8)
    pruning = hardware_runs.Pruning()
    passes = []
    seen = statements.recorded(db)
    while True:
        seen.clear()
        deleted = hardware_runs.prune(db, pruning, keep_runs=3, max_age_days=0, batch=7)
        assert deleted <= 7
        assert len(seen) <= 2 + 2 * 7  # bounded statements too
        passes.append(deleted)
        if not deleted:
            break
    assert sum(passes) == 6 * 5 and len(passes) > 4
    for node in nodes:
        assert len(hardware_runs.history(db, node, limit=100)) == 3


def test_prune_by_age(db: engine.Database) -> None:
    runs = _seed(db, UUID, 10)  # finished over 5 minutes from BASE
    pruning = hardware_runs.Pruning()
    now = BASE + datetime.timedelta(days=30, minutes=3)
    deleted = hardware_runs.prune(
        db, pruning, keep_runs=20, max_age_days=30, batch=100, now=now
    )
    assert deleted == 6
    assert [e.uuid for e in hardware_runs.history(db, UUID, limit=100)] == runs[6:][
        ::-1
    ]
    assert hardware_runs.get_record(db, runs[0]) is None
