"""The operator's word on each conductor, as rows."""

from inspector.db import conductor_states, engine, migration


def test_conductor_states_round_trip() -> None:
    db = engine.Database("sqlite://")
    migration.ensure_schema(db)
    assert conductor_states.get(db, "c-1") is None
    conductor_states.put(db, "c-1", '{"enabled": false}')
    conductor_states.put(db, "c-0", "{}")
    conductor_states.put(db, "c-1", '{"enabled": true}')
    assert conductor_states.get(db, "c-1") == '{"enabled": true}'
    assert conductor_states.hosts(db) == ["c-0", "c-1"]


def test_a_conductor_state_is_forgotten() -> None:
    db = engine.Database("sqlite://")
    migration.ensure_schema(db)
    conductor_states.put(db, "c-1", "{}")
    conductor_states.delete(db, "c-1")
    assert conductor_states.get(db, "c-1") is None
    assert conductor_states.hosts(db) == []
