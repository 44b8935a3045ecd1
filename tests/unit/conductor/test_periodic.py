"""Periodic tasks: run on their own thread until stopped; a failure is
logged and the task runs again. Waits on events, never sleeps."""

import threading

import pytest

from inspector.conductor.periodic import PeriodicTask


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
