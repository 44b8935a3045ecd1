"""Which lost steps a conductor picks up, and the leader lease."""

import datetime
import logging
import pathlib

import pytest

from inspector.conductor.leadership import Leadership
from inspector.conductor.takeover import Takeover, orphans
from inspector.db import engine, leases, models
from inspector.db.introspections import IntrospectionRecord
from inspector.runtime import Runtime
from tests.unit.conductor.conftest import UUID, Clock, starting

NOW = datetime.datetime(2026, 11, 22, 12, 0, 0)


def record(
    state: str = "processing",
    owner: str | None = None,
    run: str | None = None,
    deadline: datetime.datetime | None = None,
    uuid: str = "u1",
    handed_to: str | None = None,
) -> IntrospectionRecord:
    return IntrospectionRecord(
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
        handed_to=handed_to,
    )


def found(
    records: list[IntrospectionRecord],
    leader: bool,
    alive: tuple[str, ...] = ("c1", "c2"),
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


def test_unclaimed_cast_to_a_conductor_that_left_is_lost_before_its_deadline() -> None:
    """Window B of issue 35: the API cast the step to a conductor its view
    of the group still listed (killed moments before); on RabbitMQ the cast
    sits in that conductor's queue. Once the group lost it, the step is lost
    at once, not at the claim deadline."""
    soon = NOW + datetime.timedelta(seconds=25)
    to_dead = record(deadline=soon, handed_to="c3", state="processing")
    assert found([to_dead], leader=True) == [
        "conductor c3 left the group before taking the processing step cast to it"
    ]
    assert found([to_dead], leader=False) == []
    to_live = record(deadline=soon, handed_to="c2")
    assert found([to_live], leader=True) == []
    # the group cannot be read: no proof the addressee died, wait for the deadline
    assert list(orphans([to_dead], None, "c1", "r", NOW, True)) == []


def test_own_host_earlier_run_found_by_every_conductor() -> None:
    mine = record(owner="c1", run="run-before")
    assert found([mine], leader=False) == ["conductor c1 restarted while processing"]
    assert found([mine], leader=True) == ["conductor c1 restarted while processing"]


def test_one_leader_and_takeover_after_the_lease(
    db: engine.Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored = Clock()  # the time the lease rows are written and judged by
    monkeypatch.setattr(leases, "utcnow", stored)
    ticks = [1000.0]  # each conductor's own monotonic clock
    first = Leadership(db, "c1/a", lease=0.5, clock=lambda: ticks[0])
    second = Leadership(db, "c2/b", lease=0.5, clock=lambda: ticks[0])
    assert first.renew() and first.is_leader()
    assert not second.renew() and not second.is_leader()
    assert first.renew()  # renewal keeps it
    # first stops renewing (paused or dead) for longer than the lease
    stored.advance(0.8)
    ticks[0] += 0.8
    assert not first.is_leader()  # its own clock says the lease ran out
    assert second.renew() and second.is_leader()
    assert not first.renew()  # notices the loss instead of assuming
    assert (leases.held(db, leases.LEADER) or ("",))[0] == "c2/b"


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


def test_unclaimed_steps_are_taken_while_the_group_cannot_be_read() -> None:
    late = record(deadline=NOW - datetime.timedelta(seconds=1), uuid="u1")
    other = record(owner="c3", run="r", uuid="u2")
    reasons = [
        o.record.uuid for o in orphans([late, other], None, "c1", "r", NOW, True)
    ]
    # c3 may well be alive: without the group nobody judges its work
    assert reasons == ["u1"]


def expire(db: engine.Database) -> None:
    """Make the leader lease run out now, as a missed renewal would."""
    with db.session() as session:
        row = session.get(models.Lease, leases.LEADER)
        assert row is not None
        row.expires_at = models.utcnow() - datetime.timedelta(seconds=1)


def test_epoch_grows_with_every_term(db: engine.Database) -> None:
    epochs = [leases.hold(db, leases.LEADER, "c1/a", 30)]
    epochs.append(leases.hold(db, leases.LEADER, "c1/a", 30))  # renewal
    leases.give_up(db, leases.LEADER, "c1/a")  # clean stop
    epochs.append(leases.hold(db, leases.LEADER, "c2/b", 30))
    expire(db)  # c2 dies
    epochs.append(leases.hold(db, leases.LEADER, "c1/a", 30))
    expire(db)  # c1 paused past its lease, then renews: a new term
    epochs.append(leases.hold(db, leases.LEADER, "c1/a", 30))
    assert epochs == [1, 1, 2, 3, 4]


def test_renewal_and_takeover_of_one_expired_lease_cannot_both_win(
    db: engine.Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """c2 reads c1's expired lease; c1 renews before c2 writes. c2 must
    fail instead of leading next to c1 (it did: its write only compared
    the epoch, which c1's renewal did not change)."""
    assert leases.hold(db, leases.LEADER, "c1/a", 30) == 1
    expire(db)
    stale = leases._row(db, leases.LEADER)
    assert leases.hold(db, leases.LEADER, "c1/a", 30) == 2
    # what c2 read before c1's renewal
    monkeypatch.setattr(leases, "_read", lambda _conn, _name: stale)
    assert leases.hold(db, leases.LEADER, "c2/b", 30) is None
    monkeypatch.undo()
    assert (leases.held(db, leases.LEADER) or ("",))[0] == "c1/a"
    assert leases._row(db, leases.LEADER).epoch == 2


def test_leadership_log_says_why_it_does_not_lead(
    tmp_path: pathlib.Path, db: engine.Database, caplog: pytest.LogCaptureFixture
) -> None:
    broken = engine.Database(f"sqlite:///{tmp_path}/no/such/dir/db.sqlite")
    lead = Leadership(broken, "c1/a", lease=5)
    with caplog.at_level(logging.DEBUG, logger="inspector.conductor.leadership"):
        for _ in range(5):
            assert not lead.renew()
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, warnings  # once per outage, not per renewal
    assert "no conductor can lead meanwhile" in warnings[0].getMessage()
    assert "another conductor" not in warnings[0].getMessage()
    lead._db = db  # the database is back
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="inspector.conductor.leadership"):
        assert lead.renew()
    lines = [r.getMessage() for r in caplog.records]
    assert any("can be read again" in m for m in lines), lines
    assert any("is now the leader (epoch 1)" in m for m in lines), lines


class _HandOver:
    """A work queue with ``before`` in hand until the sweep has read the
    records and ``after`` from then on; a resumed step is recorded, not
    run."""

    def __init__(self, before: set[str], after: set[str]) -> None:
        self.before, self.after = before, after
        self.read = False
        self.submitted: list[str] = []

    def active(self) -> set[str]:
        return self.after if self.read else self.before

    def submit(self, uuid: str, *_args: object) -> None:
        self.submitted.append(uuid)


def _sweep_own_claimed_step(
    rt: Runtime, queue: _HandOver, monkeypatch: pytest.MonkeyPatch
) -> int:
    """Sweeps (as a non-leader) with this conductor's own step claimed in
    the database and the queue answering as ``queue`` says."""
    from inspector.db import sweeps

    starting(rt)
    working = sweeps.working

    def read(db: engine.Database) -> list[IntrospectionRecord]:
        records = working(db)
        queue.read = True
        return records

    monkeypatch.setattr(sweeps, "working", read)
    sweeper = Takeover(rt, queue, {"starting": lambda _record: None})  # type: ignore[arg-type]
    try:
        return sweeper.sweep(lambda: ["c1"], False)
    finally:
        sweeper.stop()


def test_a_step_that_ends_while_the_sweep_reads_did_not_end_early(
    rt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    # in hand when the sweep began, gone once it had read the records: the
    # step ended in between, after the read saw it still claimed here
    queue = _HandOver({UUID}, set())
    assert _sweep_own_claimed_step(rt, queue, monkeypatch) == 0
    assert queue.submitted == []


def test_a_claimed_step_no_worker_had_ended_early(
    rt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue = _HandOver(set(), set())
    assert _sweep_own_claimed_step(rt, queue, monkeypatch) == 1
    assert queue.submitted == [UUID]
