"""One PXE filter's report as the API, the CLI and the metrics show it."""

import datetime
from typing import Any

from inspector.db import pxe

STALE_AFTER = 10.0
"""Seconds without a report after which a filter counts as down (it
reports every 2 s)."""


def _iso(stamp: float | None) -> str | None:
    if stamp is None:
        return None
    return datetime.datetime.fromtimestamp(stamp, datetime.UTC).isoformat()


def view(row: dict[str, Any]) -> dict[str, Any]:
    """One filter as the API, the CLI and the metrics show it."""
    status = row["status"]
    lag = round(pxe.age(row["heartbeat_at"]), 1)
    problems = []
    if lag > STALE_AFTER:
        problems.append(f"no report for {lag:.0f} s")
    if status.get("failing_closed"):
        problems.append("failing closed: the database or Ironic is not answering")
    if not status.get("dnsmasq_started"):
        problems.append("dnsmasq not started: no complete sync yet")
    return {
        "host": row["host"],
        "driver": row["driver"],
        "healthy": not problems,
        "problems": problems,
        "last_report": row["heartbeat_at"].replace(tzinfo=datetime.UTC).isoformat(),
        "report_lag": lag,
        "last_sync": _iso(status.get("last_sync")),
        "generation": status.get("generation"),
        "allowed": status.get("allowed"),
        "denied": status.get("denied"),
        "unknown_allowed": status.get("unknown_allowed"),
        "failing_closed": bool(status.get("failing_closed")),
        "sync_requested": row["sync_requested_at"] is not None,
    }
