"""The leader lease as the conductor sees it, on an injected clock: the
lead lasts as long as the last renewal's lease, counted from before it was
asked for; a database that is away means no leader."""

import pathlib

from inspector.conductor.leadership import Leadership
from inspector.db import engine, leases


class Monotonic:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_lead_lasts_the_lease_of_the_last_renewal(db: engine.Database) -> None:
    clock = Monotonic()
    first = Leadership(db, "c1/a", lease=30, clock=clock)
    assert first.renew() and first.is_leader()
    clock.now += 29.9
    assert first.is_leader()
    clock.now += 0.2  # no renewal (paused): its own clock says it ran out
    assert not first.is_leader()
    assert first.renew() and first.is_leader()  # the database still has it


def test_another_holder_is_not_the_leader(db: engine.Database) -> None:
    clock = Monotonic()
    assert Leadership(db, "c1/a", lease=30, clock=clock).renew()
    second = Leadership(db, "c2/b", lease=30, clock=clock)
    assert not second.renew() and not second.is_leader()
    assert (leases.held(db, leases.LEADER) or ("",))[0] == "c1/a"


def test_a_resigned_lead_is_taken_at_once(db: engine.Database) -> None:
    clock = Monotonic()
    first = Leadership(db, "c1/a", lease=30, clock=clock)
    second = Leadership(db, "c2/b", lease=30, clock=clock)
    assert first.renew()
    first.resign()
    assert not first.is_leader()
    assert second.renew() and second.epoch == 2


def test_a_database_away_means_no_leader(tmp_path: pathlib.Path) -> None:
    broken = engine.Database(f"sqlite:///{tmp_path}/no/such/dir/db.sqlite")
    leadership = Leadership(broken, "c1/a", lease=5, clock=Monotonic())
    assert not leadership.renew() and not leadership.is_leader()
