"""The periodic reads over many introspections."""

import datetime

from inspector import states
from inspector.db import claims, engine, introspections, sweeps, transitions
from inspector.db.models import utcnow

UUIDS = [f"{n:08d}-2222-4333-8444-555555555555" for n in range(4)]


def _some(db: engine.Database) -> None:
    """0 starting, 1 waiting, 2 finished owing writes, 3 failed."""
    for uuid in UUIDS:
        introspections.start(db, uuid, True)
    transitions.waiting(db, introspections.get(db, UUIDS[1]))
    transitions.waiting(db, introspections.get(db, UUIDS[2]))
    transitions.posted(db, introspections.get(db, UUIDS[2]), {})
    transitions.finished(
        db,
        introspections.get(db, UUIDS[2]),
        None,
        ({"node_patches": [{"op": "x"}]}, "Ironic down"),
    )
    transitions.failed(db, introspections.get(db, UUIDS[3]), "boom")


def test_working_is_what_conductors_do(db: engine.Database) -> None:
    _some(db)
    record = introspections.get(db, UUIDS[0])
    claims.claim(db, UUIDS[0], record.version, "c1", "r")
    working = sweeps.working(db)
    assert [(r.uuid, r.state, r.owner) for r in working] == [
        (UUIDS[0], states.STARTING, "c1")
    ]


def test_timed_out_are_running_and_started_before(db: engine.Database) -> None:
    _some(db)
    later = utcnow() + datetime.timedelta(seconds=60)
    assert sorted(r.uuid for r in sweeps.timed_out(db, later)) == UUIDS[:2]
    earlier = utcnow() - datetime.timedelta(seconds=60)
    assert sweeps.timed_out(db, earlier) == []


def test_owing_are_finished_with_writes_owed(db: engine.Database) -> None:
    _some(db)
    owing = sweeps.owing(db)
    assert [(r.uuid, r.owed_reason) for r in owing] == [(UUIDS[2], "Ironic down")]
    assert introspections.settle(db, UUIDS[2], owing[0].version)
    assert sweeps.owing(db) == []


def test_count_by_state(db: engine.Database) -> None:
    assert sweeps.count_by_state(db) == {}
    _some(db)
    assert sweeps.count_by_state(db) == {
        states.STARTING: 1,
        states.WAITING: 1,
        states.FINISHED: 1,
        states.ERROR: 1,
    }
    assert sweeps.count_by_state(db, only=states.FINAL) == {
        states.FINISHED: 1,
        states.ERROR: 1,
    }
