"""The heartbeat's timing (:mod:`inspector.coordination.group`), on a clock
the test moves: the beats renew the lease at a fixed rate, and a host too
loaded to keep it says so, without saying it every second."""

import logging
from typing import Any, cast

import pytest

from inspector.coordination import group
from inspector.coordination.group import Membership


class _Done:
    def __init__(self, value: Any = None) -> None:
        self.value = value

    def get(self) -> Any:
        return self.value


class _Backend:
    """A tooz coordinator whose heartbeat takes ``cost`` seconds of the
    test's clock and says the lease is ``lease`` seconds."""

    def __init__(self, clock: list[float], lease: float = 3.0) -> None:
        self.clock = clock
        self.lease = lease
        self.costs: list[float] = []

    def heartbeat(self) -> float:
        self.clock[0] += self.costs.pop(0) if self.costs else 0.0
        return self.lease

    def update_capabilities(self, _group: Any, _caps: Any) -> _Done:
        return _Done()

    def get_members(self, _group: Any) -> _Done:
        return _Done({b"c1"})


class _Stop:
    """Stands in for the stop event: records each wait, moves the clock by
    it, and stops the loop after ``beats`` waits."""

    def __init__(self, clock: list[float], beats: int) -> None:
        self.clock = clock
        self.beats = beats
        self.waits: list[float] = []

    def wait(self, seconds: float) -> bool:
        if len(self.waits) == self.beats:
            return True
        self.waits.append(seconds)
        self.clock[0] += seconds
        return False


def _membership(
    costs: list[float], beats: int
) -> tuple[Membership, _Stop, list[float]]:
    clock = [100.0]
    backend = _Backend(clock)
    backend.costs = list(costs)
    membership = Membership(cast(Any, backend), "c1", {}, clock=lambda: clock[0])
    stop = _Stop(clock, beats)
    membership._stop = cast(Any, stop)
    return membership, stop, clock


def test_the_next_beat_is_due_a_third_of_the_lease_after_the_last_began() -> None:
    # a 3 s lease: a beat every second, whatever each one took
    membership, stop, _ = _membership([0.0, 0.6, 0.9, 0.2], beats=5)
    membership._beat()
    assert stop.waits == pytest.approx([group.MIN_BEAT, 1.0, 0.4, 0.1, 0.8])


def test_a_beat_longer_than_the_period_is_followed_at_once() -> None:
    # waiting a full second after a 2.5 s beat left the lease unrenewed
    # for 3.5 s, longer than itself
    membership, stop, _ = _membership([0.1, 2.5, 0.1], beats=4)
    membership._beat()
    assert stop.waits == pytest.approx([group.MIN_BEAT, 0.9, 0.0, 0.9])


def test_late_beats_are_said_once_a_minute_with_how_many_more(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "inspector.coordination.group")
    late = [2.0] * 20 + [0.1] * 30 + [2.0]  # 20 late, 30 s on time, 1 late
    membership, stop, _ = _membership(late, beats=len(late) + 1)
    membership._beat()
    said = [r.getMessage() for r in caplog.records if "heartbeat" in r.getMessage()]
    assert len(said) == 2, said
    assert said[0].startswith(
        "A heartbeat of conductor c1 took 2.0 s, longer than the 1.0 s "
        "between two (a third of the membership lease, 5 s at most): this host or the "
        "coordination backend is overloaded, and the membership expires"
    )
    assert "; 19 more since the last warning" in said[1]
    assert "overloaded" in said[1]


def test_an_on_time_beat_says_nothing(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "inspector.coordination.group")
    membership, _stop, _ = _membership([0.9, 1.0, 0.0], beats=4)
    membership._beat()
    assert not caplog.records


def test_beats_slowed_by_an_outage_are_not_called_late(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The outage log says a failed beat; the first beat after it
    (reconnecting, joining again) is slow because of the outage."""
    from inspector import exceptions

    caplog.set_level(logging.WARNING, "inspector.coordination.group")
    membership, _stop, clock = _membership([], beats=4)
    backend = cast(Any, membership._coordinator)
    outcomes = iter(["down", "slow", "slow"])

    def heartbeat() -> float:
        clock[0] += 2.0  # every beat is slow
        if next(outcomes) == "down":
            raise exceptions.ServiceUnavailable("etcd is away")
        return 3.0

    backend.heartbeat = heartbeat
    membership._beat_and_time()  # failed: the outage log says it
    membership._beat_and_time()  # the first after it
    assert not [r for r in caplog.records if "took" in r.getMessage()]
    membership._beat_and_time()  # slow between two that worked
    assert [r for r in caplog.records if "took 2.0 s" in r.getMessage()]
