"""The benchmarks' statistics: percentiles, a call timed many times, and
the line a timing is printed as."""

import statistics
import time
from collections.abc import Callable
from typing import Any


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered)) - 1))
    return ordered[index]


def timed(call: Callable[[], Any], rounds: int) -> dict[str, float]:
    took = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        took.append((time.perf_counter() - started) * 1000)
    took.sort()
    return {
        "p50_ms": round(statistics.median(took), 2),
        "p99_ms": round(took[min(len(took) - 1, int(len(took) * 0.99))], 2),
    }


def line(name: str, cost: dict[str, Any]) -> str:
    return f"  {name:32} p50 {cost['p50_ms']:7.2f} ms  p99 {cost['p99_ms']:7.2f} ms"
