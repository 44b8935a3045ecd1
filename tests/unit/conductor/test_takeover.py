"""Which lost steps a conductor picks up, and the leader lease."""

import datetime
import pathlib
import time

from inspector.conductor.leadership import Leadership
from inspector.conductor.takeover import orphans
from inspector.db import engine, leases
from inspector.db.introspections import Introspection

NOW = datetime.datetime(2026, 11, 22, 12, 0, 0)


def record(
    state: str = "processing",
    owner: str | None = None,
    run: str | None = None,
    deadline: datetime.datetime | None = None,
    uuid: str = "u1",
) -> Introspection:
    return Introspection(
        uuid=uuid,
        state=state,
        version=3,
        started_at=NOW,
        finished_at=None,
        error=None,
        manage_boot=True,
        owner=owner,
        owner_run=run,
        deadline=deadline,
    )


def found(
    records: list[Introspection], leader: bool, alive: tuple[str, ...] = ("c1", "c2")
) -> list[str]:
    return [o.reason for o in orphans(records, alive, "c1", "run-now", NOW, leader)]


def test_owner_alive_is_left_alone() -> None:
    assert found([record(owner="c2", run="r")], leader=True) == []
    assert found([record(owner="c1", run="run-now")], leader=True) == []


def test_owner_gone_is_taken_over_by_the_leader_only() -> None:
    lost = record(owner="c3", run="r")
    assert found([lost], leader=False) == []
    assert found([lost], leader=True) == [
        "conductor c3 left the group while processing"
    ]


def test_unclaimed_after_its_deadline() -> None:
    soon = record(deadline=NOW + datetime.timedelta(seconds=1))
    late = record(deadline=NOW - datetime.timedelta(seconds=1), state="starting")
    assert found([soon], leader=True) == []
    reasons = found([late], leader=True)
    assert len(reasons) == 1 and "starting step in time" in reasons[0]
    assert found([late], leader=False) == []


def test_own_host_earlier_run_found_by_every_conductor() -> None:
    mine = record(owner="c1", run="run-before")
    assert found([mine], leader=False) == ["conductor c1 restarted while processing"]
    assert found([mine], leader=True) == ["conductor c1 restarted while processing"]


def test_one_leader_and_takeover_after_the_lease(db: engine.Database) -> None:
    first = Leadership(db, "c1/a", lease=0.5)
    second = Leadership(db, "c2/b", lease=0.5)
    assert first.renew() and first.is_leader()
    assert not second.renew() and not second.is_leader()
    assert first.renew()  # renewal keeps it
    time.sleep(0.8)  # first stops renewing (paused or dead)
    assert not first.is_leader()  # its own clock says the lease ran out
    assert second.renew() and second.is_leader()
    assert not first.renew()  # notices the loss instead of assuming
    assert leases.holder_of(db, leases.LEADER) == "c2/b"


def test_resign_hands_over_at_once(db: engine.Database) -> None:
    first = Leadership(db, "c1/a", lease=30)
    second = Leadership(db, "c2/b", lease=30)
    assert first.renew()
    first.resign()
    assert second.renew()


def test_lost_database_means_not_leader(tmp_path: pathlib.Path) -> None:
    broken = engine.Database(f"sqlite:///{tmp_path}/no/such/dir/db.sqlite")
    assert not Leadership(broken, "c1/a", lease=5).renew()


def test_slots_are_spaced(db: engine.Database) -> None:
    slots = [leases.reserve_slot(db, leases.POWER_ON, 2.0) for _ in range(3)]
    gaps = [(b - a).total_seconds() for a, b in zip(slots, slots[1:], strict=False)]
    assert gaps == [2.0, 2.0]
