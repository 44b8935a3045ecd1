"""The benchmark's account of where a run's wall time went."""

import datetime
from typing import Any

from lab.bench import wall_time
from lab.machines.ramdisk import Callback

WALL0 = 1_800_000_000.0
MONO0 = 100.0


def _iso(seconds_after_start: float) -> str:
    when = datetime.datetime.fromtimestamp(WALL0 + seconds_after_start, datetime.UTC)
    return when.replace(tzinfo=None).isoformat()  # as the services write it


def test_legs_add_up_to_the_last_machine() -> None:
    answered = {"u1": MONO0 + 0.1, "u2": MONO0 + 0.3}
    callbacks = [
        Callback(
            "m1", booted_at=MONO0 + 0.4, posted_at=MONO0 + 0.9, latency=0.02, status=200
        ),
        Callback(
            "m2", booted_at=MONO0 + 0.5, posted_at=MONO0 + 1.5, latency=0.05, status=200
        ),
    ]
    final = {
        "u1": {"finished_at": _iso(1.0)},
        "u2": {"finished_at": _iso(1.6)},
    }
    legs = wall_time.breakdown(
        (MONO0, WALL0), answered, callbacks, {"m1": "u1", "m2": "u2"}, final, 1.8
    )
    assert legs["last_machine_ms"] == {
        "start": 300,
        "power_on_seen": 200,
        "boot": 1000,
        "continue": 50,
        "processed": 50,
    }
    assert legs["boot"] == {"p50_ms": 750, "max_ms": 1000}
    assert legs["seen_late_ms"] == 200
    assert "the last machine: start 300" in wall_time.describe("s", legs)


def test_service_elapsed_is_the_last_recorded_finish() -> None:
    final = {"u1": {"finished_at": _iso(1.25)}, "u2": {"finished_at": _iso(0.5)}}
    elapsed = wall_time.service_elapsed((MONO0, WALL0), final)
    assert elapsed is not None and abs(elapsed - 1.25) < 1e-3
    # aware timestamps too
    final["u1"]["finished_at"] = datetime.datetime.fromtimestamp(
        WALL0 + 2.0, datetime.UTC
    ).isoformat()
    elapsed = wall_time.service_elapsed((MONO0, WALL0), final)
    assert elapsed is not None and abs(elapsed - 2.0) < 1e-3


def test_service_elapsed_needs_every_finish() -> None:
    final: dict[str, dict[str, Any]] = {
        "u1": {"finished_at": _iso(1.0)},
        "u2": {"finished_at": None},
    }
    assert wall_time.service_elapsed((MONO0, WALL0), final) is None
    assert wall_time.service_elapsed((MONO0, WALL0), {}) is None
