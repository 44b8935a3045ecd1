"""The follow benchmark's numbers (lab/bench/follow.py): Ironic's CPU per
poll and per whole scan from its CPU windows, and the report printed."""

from typing import Any

from lab.bench import history
from lab.bench.follow_requests import POLL, SCAN
from lab.bench.stats import percentile

DEFAULT_POLL = 60
"""[ironic_follow]poll_interval's default, seconds."""
DEFAULT_FULL_SCAN = 3600
"""[ironic_follow]full_scan_interval's default, seconds."""
GOAL_SHARE = 1.0
"""The issue's bound: Ironic's CPU for polls with nothing new, % of a core."""


def idle_rate(idle: list[dict[str, Any]]) -> float:
    """Ironic's CPU seconds per second with no client, over the windows."""
    return sum(w["ironic_cpu_s"] for w in idle) / sum(w["seconds"] for w in idle)


def per_poll_ms(window: dict[str, Any], rate: float, kind: str) -> float | None:
    """Ironic's CPU per request of ``kind`` over ``window``, less what it
    spends with no client over as long, in ms."""
    count = window["requests"].get(kind, 0)
    if not count:
        return None
    extra = window["ironic_cpu_s"] - rate * window["seconds"]
    return round(extra / count * 1000, 2)


def share_of_core(ms: float, interval: float) -> float:
    """``ms`` of CPU every ``interval`` seconds, in % of one core."""
    return round(ms / (interval * 1000) * 100, 3)


def _seeded(seed: dict[str, Any]) -> str:
    if seed.get("cached"):
        return "its database copied from the lab's cache"
    return f"seeded in {seed['seconds']} s"


def derive(result: dict[str, Any], rate: float) -> dict[str, Any]:
    """The numbers the issue asks for, from the windows."""
    per_poll = [per_poll_ms(w, rate, POLL) for w in result["poll_windows"]]
    scans = result["whole_scans_window"]
    scan_count = scans["requests"].get(SCAN, 0)
    per_scan = per_poll_ms(scans, rate, SCAN)
    ours_scan = scans["ours_cpu_s"] / scan_count if scan_count else None
    derived: dict[str, Any] = {
        "ironic_idle_cpu_per_min_s": round(rate * 60, 3),
        "ironic_ms_per_poll": per_poll,
        "ironic_share_at_default_interval_pct": [
            None if ms is None else share_of_core(ms, DEFAULT_POLL) for ms in per_poll
        ],
        "ours_ms_per_poll": [
            round(w["ours_cpu_s"] / w["requests"][POLL] * 1000, 2)
            if w["requests"].get(POLL)
            else None
            for w in result["poll_windows"]
        ],
        "ironic_s_per_whole_scan": None
        if per_scan is None
        else round(per_scan / 1000, 2),
        "ours_s_per_whole_scan": None if ours_scan is None else round(ours_scan, 2),
    }
    if per_scan is not None:
        derived["whole_scans_at_default_pct"] = share_of_core(
            per_scan, DEFAULT_FULL_SCAN
        )
        derived["whole_scans_ironic_s_per_hour"] = round(
            per_scan / 1000 * 3600 / DEFAULT_FULL_SCAN, 2
        )
    listing = result["ironic_listings"]["reconcile's node list"]["ironic_cpu_s"]
    derived["reconcile_at_default_pct"] = share_of_core(
        percentile(listing, 50) * 1000, 60
    )
    return derived


def report(result: dict[str, Any]) -> str:
    options = result["options"]
    derived = result["derived"]
    catch = result["catch_up"]
    lines = [
        f"Following Ironic (real Ironic 39, SQLite) with {options['nodes']} nodes "
        f"({_seeded(result['seed'])}; load average "
        f"{result['load_average'][0]} at the start, {result['load_average'][-1]} "
        "at the end):",
        f"  catch-up: {catch['recorded']} recorded in {catch['seconds_to_all']} s; "
        f"Ironic CPU {catch['ironic_cpu_s']} s ({catch['ironic_cpu_ms_per_run']} "
        f"ms per run), ours {catch['ours_cpu_s']} s "
        f"({catch['ours_cpu_ms_per_run']} ms per run)",
        f"  Ironic with no client: {derived['ironic_idle_cpu_per_min_s']} s of CPU "
        "per minute",
    ]
    for w, ms, share, ours in zip(
        result["poll_windows"],
        derived["ironic_ms_per_poll"],
        derived["ironic_share_at_default_interval_pct"],
        derived["ours_ms_per_poll"],
        strict=True,
    ):
        over = "" if share is None or share < GOAL_SHARE else "  OVER 1 %"
        lines.append(
            f"  polls with nothing new: {w['requests'].get(POLL, 0)} in "
            f"{w['seconds']} s, Ironic {ms} ms per poll ({share} % of a core at "
            f"{DEFAULT_POLL} s), ours {ours} ms{over}"
        )
    lines.append(
        f"  whole scan of {options['nodes']} nodes: Ironic "
        f"{derived['ironic_s_per_whole_scan']} s, ours "
        f"{derived['ours_s_per_whole_scan']} s; at full_scan_interval "
        f"{DEFAULT_FULL_SCAN} s: {derived.get('whole_scans_at_default_pct')} % "
        "of a core"
    )
    for name, cost in result["ironic_listings"].items():
        lines.append(
            f"  {name} with the service's client: Ironic {cost['ironic_cpu_s']} s"
        )
    lines.append(
        f"  (the reconcile every 60 s, [processing]sync_interval's default: "
        f"{derived['reconcile_at_default_pct']} % of a core)"
    )
    for key in ("burst", "burst_with_endpoints"):
        b = result[key]
        lines.append(
            f"  {key.replace('_', ' ')}: {b['recorded']} of {b['inspections']} "
            f"recorded (their ends over {b.get('ends_over_s')} s), latency "
            f"{b['latency_s']} s, within two polls "
            f"{b['within_two_polls']}; CPU per run ours "
            f"{b['ours_cpu_ms_per_run']} ms, Ironic {b['ironic_cpu_ms_per_run']} ms, "
            f"the seed script (Ironic's inspecting) {b['seed_cpu_s']} s"
        )
        timeline = b["timeline"]
        lines.append(
            "    polls (nodes/seconds/wait before): "
            + ", ".join(
                f"{p['nodes']}/{p['seconds']}/{p['wait_before_s']}"
                for p in timeline["polls"]
            )
            + f"; per node: Ironic's inventory answer "
            f"{timeline['inventory_read_ms_p50']} ms, its turn "
            f"{timeline['turn_ms_p50']} ms (p50)"
        )
    for label, costs in (
        ("during the burst", result["burst_with_endpoints"].get("endpoints", {})),
        ("at the end", result["endpoints_quiet"]),
    ):
        lines.append(f"  fleet endpoints {label}:")
        for name, cost in costs.items():
            if isinstance(cost, dict):
                over = "  OVER 200 ms" if cost["p99_ms"] > history.TARGET_MS else ""
                lines.append(
                    f"    {name:32} p50 {cost['p50_ms']:8.2f} ms  p99 "
                    f"{cost['p99_ms']:8.2f} ms{over}"
                )
    if "profile" in result["burst_with_endpoints"]:
        lines.append("  the inspector during the second burst (py-spy, --gil):")
        lines.append(result["burst_with_endpoints"]["profile"])
    return "\n".join(lines)
