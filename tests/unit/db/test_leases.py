"""Expiring holds in the database."""

import itertools

from inspector.db import engine, leases, migration


def test_a_running_lease_is_held() -> None:
    db = engine.Database("sqlite://")
    migration.ensure_schema(db)
    assert leases.held(db, leases.LEADER) is None
    leases.hold(db, leases.LEADER, "host-a/run", 30)
    found = leases.held(db, leases.LEADER)
    assert found is not None and found[0] == "host-a/run"
    leases.give_up(db, leases.LEADER, "host-a/run")
    assert leases.held(db, leases.LEADER) is None


def test_slots_are_spaced_over_every_caller() -> None:
    db = engine.Database("sqlite://")
    migration.ensure_schema(db)
    slots = [leases.reserve_slot(db, leases.POWER_ON, 10, burst=2) for _ in range(5)]
    gaps = [round((b - a).total_seconds()) for a, b in itertools.pairwise(slots)]
    assert gaps == [0, 10, 0, 10]  # two per window of ten seconds


def test_another_holders_running_lease_is_not_taken() -> None:
    db = engine.Database("sqlite://")
    migration.ensure_schema(db)
    assert leases.hold(db, leases.LEADER, "c1/a", 30) == 1
    assert leases.hold(db, leases.LEADER, "c2/b", 30) is None
    assert (leases.held(db, leases.LEADER) or ("",))[0] == "c1/a"
