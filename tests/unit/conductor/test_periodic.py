"""Periodic tasks: run on their own thread until stopped; a failure is
logged and the task runs again; at a fixed rate (the follower's poll) the
wait is the interval less the run's length. Waits on events, never
sleeps."""

import threading
from typing import Any

import pytest

from inspector.conductor.periodic import PAUSED_WAIT, PeriodicTask
from inspector.conductor.service import ConductorService
from inspector.runtime import Runtime


def test_runs_again_until_stopped() -> None:
    runs: list[int] = []
    third = threading.Event()

    def tick() -> None:
        runs.append(1)
        if len(runs) == 3:
            third.set()

    task = PeriodicTask("tick", lambda: 0.001, tick)
    task.start()
    assert third.wait(10)
    task.stop()
    done = len(runs)
    assert done >= 3
    assert not task._thread.is_alive()
    assert len(runs) == done  # stopped: no run after


def test_a_failure_is_logged_and_the_task_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    runs: list[int] = []
    again = threading.Event()

    def tick() -> None:
        runs.append(1)
        if len(runs) == 1:
            raise RuntimeError("the database is away")
        again.set()

    task = PeriodicTask("flaky", lambda: 0.001, tick)
    task.start()
    assert again.wait(10)
    task.stop()
    assert "Periodic task flaky failed" in caplog.text
    assert "the database is away" in caplog.text


class Server:
    def start(self) -> None: ...

    def stop(self) -> None: ...

    def wait(self) -> None: ...


class Members:
    def hosts(self) -> list[str]:
        return []


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Recorded(PeriodicTask):
    """Runs in the test's thread: each wait recorded, not waited; stopped
    after ``waits`` of them."""

    def __init__(self, waits: int, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.waits: list[float] = []
        self._last = waits

    def _wait(self, seconds: float) -> bool:
        self.waits.append(seconds)
        return len(self.waits) >= self._last


def _task(takes: float, interval: float = 10.0, **kwargs: Any) -> Recorded:
    clock = Clock()

    def run() -> None:
        clock.now += takes

    return Recorded(4, "poll", lambda: interval, run, clock=clock, **kwargs)


def test_a_fixed_rate_waits_the_interval_less_the_runs_length() -> None:
    task = _task(takes=7, fixed_rate=True)
    task._run()
    # the first after a whole interval, then one every 10 s from its start
    assert task.waits == [10, 3, 3, 3]


def test_a_fixed_rate_run_longer_than_the_interval_is_followed_at_once() -> None:
    task = _task(takes=25, fixed_rate=True)
    task._run()
    assert task.waits == [10, 0, 0, 0]  # never negative; none made up


def test_by_default_the_whole_interval_follows_each_run() -> None:
    task = _task(takes=7)
    task._run()
    assert task.waits == [10, 10, 10, 10]


def test_a_paused_fixed_rate_task_waits_a_whole_interval_when_resumed() -> None:
    intervals = iter([10.0, 0.0, 0.0, 10.0, 10.0])
    clock = Clock()

    def run() -> None:
        clock.now += 4

    task = Recorded(
        5, "poll", lambda: next(intervals), run, clock=clock, fixed_rate=True
    )
    task._run()
    assert task.waits == [10, PAUSED_WAIT, PAUSED_WAIT, 10, 6]


def test_the_follow_task_polls_at_a_fixed_rate_the_others_not(rt: Runtime) -> None:
    """The follower's poll holds a latency bound; the others are sweeps
    whose work grows with what they find: never back to back."""
    rt.conf.set_override("enabled", True, group="ironic_follow")
    service = ConductorService(rt, lambda manager: Server(), Members())
    rates = {task.name: task.fixed_rate for task in service._periodic}
    assert rates == {
        "cluster": False,
        "timeouts": False,
        "reconcile": False,
        "history": False,
        "follow-ironic": True,
    }
