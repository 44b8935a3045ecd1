"""A status GET under load: wrk at 1, 10 and 50 connections, and the CPU
the serving processes spend per request."""

import re
import shutil
import subprocess
from typing import Any

from lab import procstat

WRK_SECONDS = 5


def _ms(text: str) -> float:
    match = re.match(r"([\d.]+)(us|ms|s)", text)
    if not match:
        return float("nan")
    value, unit = float(match.group(1)), match.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value


def status_get_load(url: str, pids: list[int] | None = None) -> dict[str, Any]:
    """wrk against one status GET at 1, 10 and 50 connections.

    With ``pids`` (the processes serving the API), also their CPU time per
    request served: on a shared machine requests per second move with the
    other load, CPU per request much less.
    """
    wrk = shutil.which("wrk")
    if not wrk:
        return {"skipped": "wrk is not installed (Debian package wrk)"}
    results: dict[str, Any] = {}
    for connections in (1, 10, 50):
        cpu_before = sum(procstat.lifetime_cpu_seconds(p) for p in pids or ())
        out = subprocess.run(
            [wrk, "-t1", f"-c{connections}", f"-d{WRK_SECONDS}s", "--latency", url],
            capture_output=True,
            text=True,
            timeout=WRK_SECONDS + 30,
        ).stdout
        cpu = sum(procstat.lifetime_cpu_seconds(p) for p in pids or ()) - cpu_before
        rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
        p50 = re.search(r"^\s+50%\s+(\S+)", out, re.M)
        p99 = re.search(r"^\s+99%\s+(\S+)", out, re.M)
        errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        served = re.search(r"(\d+) requests in", out)
        results[str(connections)] = {
            "requests_per_s": float(rps.group(1)) if rps else None,
            "p50_ms": _ms(p50.group(1)) if p50 else None,
            "p99_ms": _ms(p99.group(1)) if p99 else None,
            "non_2xx": int(errors.group(1)) if errors else 0,
        }
        if pids and served and int(served.group(1)):
            # clock ticks (10 ms) over a 5 s run: well under 1 % of the total
            results[str(connections)]["cpu_us_per_request"] = round(
                cpu * 1e6 / int(served.group(1)), 1
            )
    return results
