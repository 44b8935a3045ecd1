"""One introspection record: its reads and fenced writes (each event's
writer, :mod:`inspector.db.transitions`)."""

import dataclasses

import pytest

from inspector import exceptions, states
from inspector.db import (
    claims,
    engine,
    introspections,
    migration,
    stored_data,
    transitions,
)
from tests.unit.db import statements

UUID = "11111111-2222-4333-8444-555555555555"


def test_compare_and_swap_fences_stale_writers(db: engine.Database) -> None:
    record = introspections.start(db, UUID, True, {"mac": ["aa:bb:cc:dd:ee:ff"]})
    waiting = transitions.waiting(db, record)
    assert waiting.version == record.version + 1
    with pytest.raises(exceptions.StaleState):
        transitions.failed(db, record, "late")
    assert introspections.get(db, UUID).state == states.WAITING


def test_final_state_drops_lookup_attributes(db: engine.Database) -> None:
    introspections.start(db, UUID, True, {"mac": ["aa:bb:cc:dd:ee:ff"]})
    assert introspections.lookup(db, {"mac": ["aa:bb:cc:dd:ee:ff"]}).uuid == UUID
    transitions.failed(db, introspections.get(db, UUID), "boom")
    with pytest.raises(exceptions.LookupFailed):
        introspections.lookup(db, {"mac": ["aa:bb:cc:dd:ee:ff"]})
    record = introspections.get(db, UUID)
    assert record.error == "boom" and record.finished_at is not None


@pytest.mark.parametrize(
    "count",
    [1, introspections.LOOKUP_VALUES_NAMED, introspections.LOOKUP_VALUES_NAMED + 3],
)
def test_lookup_by_any_of_many_values(db: engine.Database, count: int) -> None:
    """Each value is its own bound parameter up to LOOKUP_VALUES_NAMED and
    one expanding parameter beyond: either way any one value finds it."""
    mine = [f"52:54:00:00:00:{n:02x}" for n in range(count)]
    other = "99999999-2222-4333-8444-555555555555"
    introspections.start(db, UUID, True, {"mac": mine, "bmc_address": ["10.0.0.1"]})
    introspections.start(db, other, True, {"mac": ["52:54:00:ff:ff:ff"]})
    for mac in mine:
        asked = {"mac": ["52:54:00:aa:aa:aa"] * (count - 1) + [mac]}
        assert introspections.lookup(db, asked).uuid == UUID
    assert (
        introspections.lookup(db, {"mac": [], "bmc_address": ["10.0.0.1"]}).uuid == UUID
    )
    found = introspections.lookup(db, {"mac": mine[:1], "bmc_address": ["10.9.9.9"]})
    assert found.uuid == UUID
    with pytest.raises(exceptions.NoMatch):
        introspections.lookup(db, {"mac": ["52:54:00:aa:aa:aa"] * count})


def test_lookup_ambiguous(db: engine.Database) -> None:
    other = "99999999-2222-4333-8444-555555555555"
    introspections.start(db, UUID, True, {"bmc_address": ["10.0.0.1"]})
    introspections.start(db, other, True, {"bmc_address": ["10.0.0.1"]})
    with pytest.raises(exceptions.LookupFailed) as err:
        introspections.lookup(db, {"bmc_address": ["10.0.0.1"]})
    assert "Multiple" in str(err.value)


def test_restart_resets_error(db: engine.Database) -> None:
    started = introspections.start(db, UUID, True)
    transitions.failed(db, started, "boom")
    again = introspections.start(db, UUID, False)
    assert again.state == states.STARTING
    assert again.error is None and again.finished_at is None
    assert again.manage_boot is False


def test_start_while_starting_refused(db: engine.Database) -> None:
    introspections.start(db, UUID, True)
    with pytest.raises(exceptions.InvalidTransition):
        introspections.start(db, UUID, True)


def test_raw_data_stored_with_transition(db: engine.Database) -> None:
    waiting = transitions.waiting(db, introspections.start(db, UUID, True))
    posted = transitions.posted(db, waiting, {"a": 1})
    assert stored_data.get(db, UUID, processed=False) == {"a": 1}
    with pytest.raises(exceptions.DataNotFound):
        stored_data.get(db, UUID, processed=True)
    # a second post of the same machine replaces the first
    transitions.failed(db, posted, "x")
    waiting = transitions.waiting(db, introspections.start(db, UUID, True))
    transitions.posted(db, waiting, {"b": 2})
    assert stored_data.get(db, UUID, processed=False) == {"b": 2}


def test_writes_return_what_they_wrote(db: engine.Database) -> None:
    """Each write answers with the row as stored, in as few statements as
    the database allows."""
    returning = db.engine.dialect.update_returning
    seen = statements.recorded(db)
    started = introspections.start(db, UUID, True, {"mac": ["aa:bb:cc:dd:ee:ff"]})
    assert seen == ["SELECT", "INSERT"] + ([] if returning else ["SELECT"]) + [
        "DELETE",
        "INSERT",
    ]
    assert started == introspections.get(db, UUID)
    seen.clear()
    claimed = claims.claim(db, UUID, started.version, "c1", "r1")
    assert seen == ["UPDATE"] + ([] if returning else ["SELECT"])
    assert claimed == introspections.get(db, UUID)
    assert claimed.owner == "c1" and claimed.version == started.version + 1
    seen.clear()
    waiting = transitions.waiting(db, claimed)
    assert seen == ["UPDATE"] + ([] if returning else ["SELECT"])
    assert waiting == introspections.get(db, UUID)
    assert waiting.state == states.WAITING and waiting.owner is None
    posted = transitions.posted(db, waiting, {})
    finished = transitions.failed(db, posted, "boom")
    assert finished == introspections.get(db, UUID)
    assert finished.finished_at is not None and finished.error == "boom"
    again = introspections.start(db, UUID, False)
    assert again == introspections.get(db, UUID)
    assert (again.state, again.error, again.finished_at) == (
        states.STARTING,
        None,
        None,
    )
    assert again.deadline is not None and again.version == finished.version + 1


def test_a_fence_reads_the_version_alone(db: engine.Database) -> None:
    record = introspections.start(db, UUID, True)
    seen = statements.recorded(db)
    introspections.check_current(db, UUID, record.version)
    assert seen == ["SELECT"]
    with pytest.raises(exceptions.StaleState):
        introspections.check_current(db, UUID, record.version - 1)
    with pytest.raises(exceptions.StaleState):  # no introspection at all
        introspections.check_current(db, "0" * 8 + UUID[8:], record.version)


def test_each_event_writes_from_the_row_the_caller_holds(
    db: engine.Database,
) -> None:
    record = introspections.start(db, UUID, True, {"mac": ["aa:bb:cc:dd:ee:ff"]})
    claimed = claims.claim(db, UUID, record.version, "c1", "run-1")
    seen = statements.recorded(db)
    waiting = transitions.waiting(db, claimed)
    assert waiting.state == states.WAITING
    assert waiting.version == claimed.version + 1
    returning = db.engine.dialect.update_returning
    assert seen == (["UPDATE"] if returning else ["UPDATE", "SELECT"])
    # the row moved on since: the write is refused, nothing changes
    with pytest.raises(exceptions.StaleState):
        transitions.failed(db, claimed, "late")
    assert introspections.get(db, UUID) == waiting
    # an event the state does not allow is refused before any write
    with pytest.raises(exceptions.InvalidTransition):
        transitions.abort_requested(db, dataclasses.replace(waiting, state="finished"))
    # a final state drops the lookup attributes and the BMC's data
    processing = transitions.posted(db, waiting, {})
    ended = transitions.finished(db, processing, owed=({"power_off": True}, "down"))
    assert ended.state == states.FINISHED and ended.finished_at is not None
    assert ended.owed == {"power_off": True} and ended.owed_reason == "down"
    with pytest.raises(exceptions.NotFound):
        introspections.lookup(db, {"mac": ["aa:bb:cc:dd:ee:ff"]})


def test_an_unknown_introspection_and_missing_data_say_which() -> None:
    db = engine.Database("sqlite://")
    migration.ensure_schema(db)
    uuid = "7f1a2b3c-0000-4000-8000-000000000000"
    unknown = (
        f"Node {uuid} was not found in the inspector (it was never "
        "introspected, or its record was removed)"
    )
    with pytest.raises(exceptions.IntrospectionNotFound) as got:
        introspections.get(db, uuid)
    assert got.value.message == unknown
    assert exceptions.DataNotFound(node=uuid).message == (
        f"Introspection data for node {uuid} was not found"
    )


def test_an_enrolled_node_is_recorded_once(db: engine.Database) -> None:
    enrolled = introspections.enroll(db, UUID, claim_within=30)
    assert (enrolled.state, enrolled.version, enrolled.manage_boot) == (
        states.ENROLLING,
        1,
        False,
    )
    assert enrolled.deadline is not None and enrolled.owner is None
    assert introspections.get(db, UUID) == enrolled
    with pytest.raises(exceptions.Conflict):
        introspections.enroll(db, UUID)


def test_a_saved_record_is_restored_finished(db: engine.Database) -> None:
    restored = introspections.restore(
        db,
        {
            "uuid": UUID,
            "state": states.ERROR,
            "started_at": "2026-01-02T03:04:05",
            "finished_at": "2026-01-02T03:14:05",
            "error": "boom",
        },
    )
    assert restored == introspections.get(db, UUID)
    assert restored.finished and restored.error == "boom"
    assert restored.started_at.isoformat() == "2026-01-02T03:04:05"
    assert (restored.version, restored.manage_boot) == (1, True)


def test_settling_owed_writes_is_fenced(db: engine.Database) -> None:
    started = introspections.start(db, UUID, True)
    ended = transitions.finished(
        db,
        transitions.posted(db, transitions.waiting(db, started), {}),
        None,
        ({}, "down"),
    )
    assert (ended.owed, ended.owed_reason) == ({}, "down")
    assert not introspections.settle(db, UUID, ended.version - 1)
    assert introspections.settle(db, UUID, ended.version)
    settled = introspections.get(db, UUID)
    assert (settled.owed_writes, settled.owed_reason) == (None, None)


def test_a_deleted_introspection_takes_its_data_along(db: engine.Database) -> None:
    started = introspections.start(db, UUID, True, {"mac": ["aa:bb:cc:dd:ee:ff"]})
    transitions.posted(db, transitions.waiting(db, started), {"a": 1})
    introspections.delete(db, UUID)
    with pytest.raises(exceptions.IntrospectionNotFound):
        introspections.get(db, UUID)
    with pytest.raises(exceptions.DataNotFound):
        stored_data.get(db, UUID, processed=False)
    introspections.delete(db, UUID)  # nothing left: no error
