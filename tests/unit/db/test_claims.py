"""Claims of an introspection's step."""

import pytest

from inspector import exceptions, states
from inspector.db import claims, engine, introspections, migration, sweeps, transitions

UUID = "11111111-2222-4333-8444-555555555555"


def test_claim_and_ownership_columns(db: engine.Database) -> None:
    record = introspections.start(db, UUID, True, {}, claim_within=30)
    assert record.owner is None and record.deadline is not None
    assert record.deadline > record.started_at
    claimed = claims.claim(db, UUID, record.version, "c1", "run1")
    assert (claimed.owner, claimed.owner_run, claimed.deadline) == ("c1", "run1", None)
    assert claimed.version == record.version + 1
    with pytest.raises(exceptions.StaleState):  # the earlier holder is fenced off
        claims.claim(db, UUID, record.version, "c2", "run2")
    with pytest.raises(exceptions.StaleState):
        introspections.check_current(db, UUID, record.version)
    introspections.check_current(db, UUID, claimed.version)
    waiting = transitions.waiting(db, claimed)
    assert waiting.owner is None and waiting.deadline is None  # the ramdisk's turn
    assert [r.uuid for r in sweeps.working(db)] == []


def test_owners_count_working_introspections() -> None:
    db = engine.Database("sqlite://")
    migration.ensure_schema(db)
    assert claims.owners(db) == {}
    record = introspections.start(db, "7f1a2b3c-0000-4000-8000-000000000000", True)
    assert record.state in states.WORKING
    assert claims.owners(db) == {}  # nobody claimed it yet


def test_the_cast_is_noted_while_the_step_is_unclaimed(db: engine.Database) -> None:
    record = introspections.start(db, UUID, True)
    assert claims.handed(db, UUID, record.version, "c2")
    noted = introspections.get(db, UUID)
    assert noted.handed_to == "c2" and noted.version == record.version  # unfenced
    claimed = claims.claim(db, UUID, record.version, "c2", "r")
    assert not claims.handed(db, UUID, claimed.version, "c3")  # claimed already
    assert not claims.handed(db, UUID, record.version, "c3")  # moved on
    assert introspections.get(db, UUID).handed_to == "c2"


def test_a_released_claim_is_due_at_once(db: engine.Database) -> None:
    record = introspections.start(db, UUID, True, claim_within=3600)
    assert record.deadline is not None
    assert claims.release_claim(db, UUID, record.version)
    released = introspections.get(db, UUID)
    assert released.deadline is not None and released.deadline < record.deadline
    assert released.version == record.version  # a conductor may still claim it
    claims.claim(db, UUID, record.version, "c1", "r")
    assert not claims.release_claim(db, UUID, record.version)


def test_owners_count_each_conductors_claims(db: engine.Database) -> None:
    other = "99999999-2222-4333-8444-555555555555"
    for uuid in (UUID, other):
        record = introspections.start(db, uuid, True)
        claims.claim(db, uuid, record.version, "c1", "r")
    assert claims.owners(db) == {"c1": 2}
    transitions.failed(db, introspections.get(db, other), "x")  # not owned
    assert claims.owners(db) == {"c1": 1}
