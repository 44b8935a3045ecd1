"""A stopping conductor's work queue: the steps it has get their time, and
what is left when the time is up is named, not waited for."""

import threading
import types
from typing import Any

from inspector import states
from inspector.conductor.filing import fail
from inspector.conductor.work_queue import WorkQueue
from inspector.db import engine, introspections
from inspector.db.introspections import Introspection
from inspector.locking.semaphore import SemaphoreLockProvider


def _queue(db: engine.Database, workers: int = 1) -> WorkQueue:
    conf = types.SimpleNamespace(max_concurrency=workers, host="c1")
    rt: Any = types.SimpleNamespace(
        conf=conf, db=db, run_id="run-1", locks=SemaphoreLockProvider()
    )
    return WorkQueue(rt, fail)


def _started(db: engine.Database, uuid: str) -> Introspection:
    return introspections.start(db, uuid, True)


def test_stop_waits_for_the_steps_it_has(db: engine.Database) -> None:
    queue = _queue(db, workers=2)
    ran: list[str] = []
    release = threading.Event()

    def step(record: Introspection) -> None:
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

    def step(record: Introspection) -> None:
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
