import pathlib
import threading
import time

from inspector.conductor.power import PowerOnPacer
from inspector.db import engine


def test_spacing_between_power_ons_of_all_pacers(db: engine.Database) -> None:
    """Two pacers on one database (two conductors) share the spacing."""
    pacers = [PowerOnPacer(lambda: 0.1, db), PowerOnPacer(lambda: 0.1, db)]
    times: list[float] = []
    lock = threading.Lock()

    def go(pacer: PowerOnPacer) -> None:
        pacer.wait()
        with lock:
            times.append(time.monotonic())

    threads = [threading.Thread(target=go, args=(pacers[i % 2],)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    times.sort()
    # nobody wakes before its slot (waking late is the scheduler's business):
    # the i-th power-on comes at least i spacings after the first
    offsets = [t - times[0] for t in times]
    # (the first caller may itself return a little after its slot)
    assert all(off >= i * 0.1 - 0.04 for i, off in enumerate(offsets)), offsets


def test_zero_delay_never_sleeps_nor_touches_the_database(
    tmp_path: pathlib.Path,
) -> None:
    broken = engine.Database(f"sqlite:///{tmp_path}/missing/dir/db.sqlite")
    pacer = PowerOnPacer(lambda: 0.0, broken)
    assert pacer.wait() == 0 and pacer.wait() == 0
