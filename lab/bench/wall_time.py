"""Where a benchmark run's wall time went, machine by machine.

Each machine's way from the start request to ``finished`` has five legs,
measured from the client side with one clock (the lab's ``monotonic``,
the service's ``finished_at`` brought onto it through the wall clock read
at the same moment):

- ``start``: the start request until its 202 (the start requests of all
  machines go out together, so this includes waiting for the service);
- ``power_on_seen``: the 202 until the lab's ramdisk player saw the node
  powered on (the service's start step, Ironic's power call, and the
  player's polling of Ironic's power states);
- ``boot``: the lab's simulated boot delay (random, per machine);
- ``continue``: the ramdisk's post until its answer;
- ``processed``: the answer until the service's ``finished_at``.

The run's wall time is the last machine's sum of these plus the time the
benchmark took to see that every machine had finished (``seen_late``).
"""

import datetime
import statistics
from typing import Any

from lab.machines.ramdisk import Callback

LEGS = ("start", "power_on_seen", "boot", "continue", "processed")


def _finished_at(text: str | None) -> float | None:
    """The service's naive-UTC ISO ``finished_at`` as epoch seconds."""
    if not text:
        return None
    when = datetime.datetime.fromisoformat(text)
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return when.timestamp()


def service_elapsed(
    clocks: tuple[float, float], final: dict[str, dict[str, Any]]
) -> float | None:
    """Seconds from the start (``clocks``: monotonic, wall, read together)
    to the last ``finished_at`` the service recorded; None unless every
    introspection in ``final`` has one. The benchmark's own look at the
    listing comes up to its polling interval later: that lag is the lab's,
    not the service's."""
    ends = [_finished_at(status.get("finished_at")) for status in final.values()]
    if not ends or None in ends:
        return None
    return max(e for e in ends if e is not None) - clocks[1]


def breakdown(
    clocks: tuple[float, float],
    answered: dict[str, float],
    callbacks: list[Callback],
    uuids: dict[str, str],
    final: dict[str, dict[str, Any]],
    elapsed: float,
) -> dict[str, Any]:
    """Median and maximum of each leg over the machines, the legs of the
    machine that finished last, and ``seen_late``.

    ``clocks`` is (monotonic, wall) read together at the start; ``answered``
    maps a node UUID to the monotonic time its start got its 202;
    ``uuids`` maps machine name to node UUID; ``final`` is the last status
    listing (UUID -> status)."""
    mono0, wall0 = clocks
    legs: dict[str, dict[str, float]] = {}
    for callback in callbacks:
        uuid = uuids.get(callback.machine)
        if uuid is None or uuid not in answered or callback.status != 200:
            continue
        done = _finished_at(final.get(uuid, {}).get("finished_at"))
        if done is None:
            continue
        replied = callback.posted_at + callback.latency
        legs[uuid] = {
            "start": answered[uuid] - mono0,
            "power_on_seen": callback.booted_at - answered[uuid],
            "boot": callback.posted_at - callback.booted_at,
            "continue": callback.latency,
            "processed": (done - wall0) - (replied - mono0),
        }
    if not legs:
        return {}
    result: dict[str, Any] = {
        leg: {
            "p50_ms": round(1000 * statistics.median(v[leg] for v in legs.values())),
            "max_ms": round(1000 * max(v[leg] for v in legs.values())),
        }
        for leg in LEGS
    }
    last = max(legs.values(), key=lambda v: sum(v.values()))
    result["last_machine_ms"] = {leg: round(1000 * last[leg]) for leg in LEGS}
    result["seen_late_ms"] = round(1000 * (elapsed - sum(last.values())))
    return result


def describe(shape: str, legs: dict[str, Any]) -> str:
    """One line for the report."""
    if not legs:
        return f"{shape}: wall time legs: none measured"
    parts = ", ".join(
        f"{leg} {legs[leg]['p50_ms']}/{legs[leg]['max_ms']}" for leg in LEGS
    )
    last = ", ".join(f"{leg} {ms}" for leg, ms in legs["last_machine_ms"].items())
    return (
        f"{shape}: wall time legs p50/max ms: {parts}; the last machine: {last}; "
        f"seen {legs['seen_late_ms']} ms after"
    )
