"""The conductor's work queue: a step's failure goes to the ``fail`` it is
given (it knows no workflow); a step that makes the next one has it claimed
and run at once; a stopping queue gives the steps it has their time, and
names what is left when the time is up instead of waiting."""

import threading
import types
from typing import Any

import pytest

from inspector import exceptions, states
from inspector.conductor import work_queue
from inspector.conductor.filing import fail
from inspector.conductor.work_queue import WorkQueue
from inspector.db import engine, introspections, transitions
from inspector.db.introspections import IntrospectionRecord
from inspector.locking.semaphore import SemaphoreLockProvider


def _queue(
    db: engine.Database, workers: int = 1, failed: Any = fail, steps: Any = None
) -> WorkQueue:
    conf = types.SimpleNamespace(max_concurrency=workers, host="c1")
    rt: Any = types.SimpleNamespace(
        conf=conf, db=db, run_id="run-1", locks=SemaphoreLockProvider()
    )
    return WorkQueue(rt, failed, steps)


def _started(db: engine.Database, uuid: str) -> IntrospectionRecord:
    return introspections.start(db, uuid, True)


def test_stop_waits_for_the_steps_it_has(db: engine.Database) -> None:
    queue = _queue(db, workers=2)
    ran: list[str] = []
    release = threading.Event()

    def step(record: IntrospectionRecord) -> None:
        assert release.wait(10)
        ran.append(record.uuid)

    for uuid in ("u1", "u2"):
        record = _started(db, uuid)
        assert queue.submit(uuid, record.version, states.STARTING, step) is not None
    stopping = threading.Thread(target=lambda: ran.append(str(queue.stop(None))))
    stopping.start()
    stopping.join(0.2)
    assert stopping.is_alive()  # the steps are not done: it waits
    release.set()
    stopping.join(10)
    assert sorted(ran[:2]) == ["u1", "u2"] and ran[2] == "{}"


def test_stop_names_what_is_left_when_the_time_is_up(db: engine.Database) -> None:
    queue = _queue(db, workers=1)
    ran: list[str] = []
    running = threading.Event()
    release = threading.Event()

    def step(record: IntrospectionRecord) -> None:
        running.set()
        assert release.wait(10)
        ran.append(record.uuid)

    for uuid in ("u1", "u2"):
        record = _started(db, uuid)
        queue.submit(uuid, record.version, states.STARTING, step)
    assert running.wait(10)
    left = queue.stop(timeout=0.05)
    assert left == {"u1": states.STARTING, "u2": states.STARTING}
    release.set()
    # the running step ends on its own; the queued one never starts
    for worker in threading.enumerate():
        if worker.name.startswith("work"):
            worker.join(10)
    assert ran == ["u1"] and queue.active() == {"u2"}


class Failures:
    """The ``fail`` a queue is given: records (uuid, version, message)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int, str]] = []

    def __call__(self, rt: Any, uuid: str, version: int, message: str) -> None:
        self.seen.append((uuid, version, message))


def _run_one(db: engine.Database, step: Any) -> tuple[Failures, IntrospectionRecord]:
    failures = Failures()
    queue = _queue(db, failed=failures)
    record = _started(db, "u1")
    queued = queue.submit("u1", record.version, states.STARTING, step)
    assert queued is not None
    queued.result(10)
    assert queue.stop(10) == {}
    return failures, introspections.get(db, "u1")


@pytest.mark.parametrize(
    ("raised", "message"),
    [
        (exceptions.ProcessingError("no disks"), "no disks"),
        (KeyError("cpu"), "Unexpected KeyError while starting: 'cpu'"),
    ],
)
def test_a_failed_step_goes_to_the_fail_given(
    db: engine.Database, raised: Exception, message: str
) -> None:
    def step(record: IntrospectionRecord) -> None:
        raise raised

    failures, record = _run_one(db, step)
    assert failures.seen == [("u1", record.version, message)]


@pytest.mark.parametrize(
    "raised",
    [
        exceptions.StaleState(node="u1", version=1),
        exceptions.ServiceUnavailable("the database is away"),
    ],
)
def test_stale_work_and_outages_fail_nothing(
    db: engine.Database, raised: Exception
) -> None:
    def step(record: IntrospectionRecord) -> None:
        raise raised

    failures, _record = _run_one(db, step)
    assert failures.seen == []


def test_a_lock_held_by_other_work_fails_the_step(
    db: engine.Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(work_queue, "LOCK_TIMEOUT", 0.05)
    failures = Failures()
    queue = _queue(db, failed=failures)
    record = _started(db, "u1")
    held = queue.rt.locks.get_lock("u1")
    assert held.acquire()
    try:
        queued = queue.submit("u1", record.version, states.STARTING, print)
        assert queued is not None
        queued.result(10)
    finally:
        held.release()
    ((uuid, _version, message),) = failures.seen
    assert uuid == "u1" and message.startswith("Could not lock node u1 within")


def test_a_step_that_makes_the_next_has_it_claimed_and_run(
    db: engine.Database,
) -> None:
    """A start that got the data (out of band): the processing step runs at
    once in the same worker, claimed, and its failure is filed against its
    own version (not the start step's, which the data made stale)."""
    seen: list[IntrospectionRecord] = []

    def started(record: IntrospectionRecord) -> IntrospectionRecord:
        return transitions.posted(db, transitions.waiting(db, record), {})

    def processing(record: IntrospectionRecord) -> None:
        seen.append(record)
        raise exceptions.InspectorError("no cpu.count")

    failures = Failures()
    queue = _queue(db, failed=failures, steps={states.PROCESSING: processing})
    record = _started(db, "u1")
    done = queue.submit("u1", record.version, states.STARTING, started)
    assert done is not None
    done.result(10)
    [claimed] = seen
    assert (claimed.state, claimed.owner) == (states.PROCESSING, "c1")
    assert claimed == introspections.get(db, "u1")
    assert failures.seen == [("u1", claimed.version, "no cpu.count")]
    assert queue.active() == set()
