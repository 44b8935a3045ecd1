"""What the follower recorded, read from the inspector's SQLite
(``ironic_inspections``, lab/bench/follow.py): how many, and each
inspection's latency from Ironic's finish to its record."""

import datetime
import pathlib
import sqlite3
from typing import Any

from lab.bench.stats import percentile


def recorded_rows(path: pathlib.Path) -> dict[str, tuple[Any, Any, Any]]:
    """``ironic_inspections`` read from the inspector's SQLite: node ->
    (finished_at, recorded_at, run)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        rows = conn.execute(
            "SELECT node_uuid, finished_at, recorded_at, run FROM ironic_inspections"
        ).fetchall()
    finally:
        conn.close()
    return {
        uuid: (_parse(finished), _parse(recorded), run)
        for uuid, finished, recorded, run in rows
    }


def recorded_count(path: pathlib.Path, since: datetime.datetime | None = None) -> int:
    """Inspections recorded with a run (that finished ``since`` or later)."""
    if not path.exists():
        return 0
    query = "SELECT count(*) FROM ironic_inspections WHERE run IS NOT NULL"
    # SQLAlchemy writes SQLite's times as text that sorts as the time
    after = (since or datetime.datetime.min).isoformat(" ")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        return int(
            conn.execute(query + " AND finished_at >= ?", (after,)).fetchone()[0]
        )
    except sqlite3.OperationalError:  # no table yet
        return 0
    finally:
        conn.close()


def _parse(text: Any) -> datetime.datetime | None:
    return datetime.datetime.fromisoformat(text) if text else None


def latencies(
    written: dict[str, datetime.datetime], rows: dict[str, tuple[Any, Any, Any]]
) -> tuple[list[float], list[str]]:
    """Seconds from each inspection's finish (as the seed script wrote it)
    to its ``recorded_at``; the nodes whose inspection is not recorded."""
    found, missing = [], []
    for uuid, finished in sorted(written.items()):
        row = rows.get(uuid)
        if row is None or row[0] is None or row[2] is None:
            missing.append(uuid)
            continue
        if abs((row[0] - finished).total_seconds()) > 0.001:
            missing.append(uuid)  # an older inspection of the node
            continue
        found.append((row[1] - finished).total_seconds())
    return sorted(found), missing


def spread(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p99": None, "max": None}
    return {
        "p50": round(percentile(values, 50), 2),
        "p99": round(percentile(values, 99), 2),
        "max": round(max(values), 2),
    }
