import datetime
import pathlib
import threading
from typing import Any

import pytest

from inspector.conductor import power
from inspector.conductor.power import PowerOnPacer
from inspector.db import engine
from inspector.db.models import utcnow
from tests.unit.conductor.conftest import Clock


def test_spacing_between_power_ons_of_all_pacers(
    db: engine.Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two pacers on one database (two conductors) share the spacing: the
    slots they reserve are a delay apart, and nobody returns before its
    slot. Checked on the slots themselves, not on wake-up times, which
    depend on the scheduler of a loaded machine."""
    pacers = [PowerOnPacer(lambda: 0.1, db), PowerOnPacer(lambda: 0.1, db)]
    reserve = power.leases.reserve_slot
    mine = threading.local()
    seen: list[tuple[datetime.datetime, datetime.datetime]] = []
    """(slot reserved, time wait() returned) of each caller"""

    def recording(*args: Any, **kwargs: Any) -> datetime.datetime:
        slot: datetime.datetime = reserve(*args, **kwargs)
        mine.slot = slot
        return slot

    monkeypatch.setattr(power.leases, "reserve_slot", recording)

    def go(pacer: PowerOnPacer) -> None:
        pacer.wait()
        seen.append((mine.slot, utcnow()))

    threads = [threading.Thread(target=go, args=(pacers[i % 2],)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    slots = sorted(slot for slot, _ in seen)
    assert len(slots) == 6
    gaps = [(b - a).total_seconds() for a, b in zip(slots, slots[1:], strict=False)]
    assert all(gap >= 0.1 - 1e-6 for gap in gaps), gaps
    for slot, returned in seen:
        assert returned >= slot, (returned, slot)


def test_zero_delay_never_sleeps_nor_touches_the_database(
    tmp_path: pathlib.Path,
) -> None:
    broken = engine.Database(f"sqlite:///{tmp_path}/missing/dir/db.sqlite")
    pacer = PowerOnPacer(lambda: 0.0, broken)
    assert pacer.wait() == 0 and pacer.wait() == 0


def test_burst_lets_that_many_through_per_window(db: engine.Database) -> None:
    """Burst 3, window 10 s: 3 slots share the first window's start, the
    next 3 the next window's (10 s later), and so on."""
    slots = [
        power.leases.reserve_slot(db, power.leases.POWER_ON, 10.0, burst=3)
        for _ in range(7)
    ]
    offsets = [round((s - slots[0]).total_seconds()) for s in slots]
    assert offsets == [0, 0, 0, 10, 10, 10, 20]


def test_burst_shared_by_concurrent_callers(tmp_path: pathlib.Path) -> None:
    """Six callers at once on two engines (two conductors), burst 2,
    windows 10 s: two slots in each of three windows, never three."""
    url = f"sqlite:///{tmp_path}/shared.sqlite"
    dbs = [engine.Database(url), engine.Database(url)]
    from inspector.db import migration

    migration.upgrade(dbs[0])
    slots: list[datetime.datetime] = []
    lock = threading.Lock()

    def go(db: engine.Database) -> None:
        slot = power.leases.reserve_slot(db, power.leases.POWER_ON, 10.0, burst=2)
        with lock:
            slots.append(slot)

    threads = [threading.Thread(target=go, args=(dbs[i % 2],)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    first = min(slots)
    windows = sorted(int((s - first).total_seconds() // 10) for s in slots)
    assert windows == [0, 0, 1, 1, 2, 2]


def test_a_window_over_starts_a_new_one_now(
    db: engine.Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    monkeypatch.setattr(power.leases, "utcnow", clock)
    first = power.leases.reserve_slot(db, power.leases.POWER_ON, 0.05, burst=5)
    clock.advance(0.1)  # past the first window of 0.05 s
    later = power.leases.reserve_slot(db, power.leases.POWER_ON, 0.05, burst=5)
    assert later == clock.now  # a new window, starting now
    assert (later - first).total_seconds() == pytest.approx(0.1)
