"""The operator's word on each conductor, as rows."""

from inspector.db import conductor_states, engine, migration


def _db() -> engine.Database:
    db = engine.Database("sqlite://")
    migration.ensure_schema(db)
    return db


def test_conductor_states_round_trip() -> None:
    db = _db()
    assert conductor_states.get(db, "c-1") is None
    assert conductor_states.every(db) == {}
    conductor_states.put(db, "c-1", '{"enabled": false}')
    conductor_states.put(db, "c-0", "{}")
    conductor_states.put(db, "c-1", '{"enabled": true}')
    assert conductor_states.get(db, "c-1") == '{"enabled": true}'
    assert conductor_states.every(db) == {"c-0": "{}", "c-1": '{"enabled": true}'}


def test_a_conductor_state_is_forgotten() -> None:
    db = _db()
    conductor_states.put(db, "c-1", "{}")
    conductor_states.delete(db, "c-1")
    assert conductor_states.get(db, "c-1") is None
    assert conductor_states.every(db) == {}


def test_add_keeps_a_stored_document() -> None:
    db = _db()
    assert conductor_states.add(db, "c-1", '{"enabled": false}')
    assert not conductor_states.add(db, "c-1", '{"enabled": false, "reason": "x"}')
    assert conductor_states.get(db, "c-1") == '{"enabled": false}'
