"""The fleet view at scale: 10,000 nodes with 20 hardware runs each
(200,000 ``hardware_runs`` rows) written straight into the database, then
every inventory endpoint and the /fleet page timed over HTTP on loopback,
one request at a time, on SQLite and PostgreSQL (``make bench
BENCH_SCALE=history``). Prints numbers, asserts nothing.
"""

import os
import pathlib
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import requests
import sqlalchemy as sa

from lab.bench.scale import database, peak_rss_mb, serving
from lab.bench.stats import line, timed
from lab.machines import fleet_rows
from lab.servers.inspector import InspectorServer

ROUNDS = 100
TARGET_MS = 200.0
"""The issue's bound on each endpoint's p99."""


def seed(url: str, nodes: int, runs: int) -> tuple[list[str], float]:
    """The fleet's rows; its node UUIDs and the seconds the load took."""
    from inspector.db import engine

    db = engine.Database(url)
    started = time.perf_counter()
    uuids = fleet_rows.generate(db, nodes, runs)
    took = time.perf_counter() - started
    if db.engine.dialect.name == "postgresql":
        # what autovacuum does within a minute of a bulk load
        with db.begin() as conn:
            conn.execute(sa.text("ANALYZE hardware_runs"))
            conn.execute(sa.text("ANALYZE introspections"))
    db.dispose()
    return uuids, took


COLD_ROUNDS = 40
COLD_PATHS = {
    "inventory first page (50)": "/v1/inventory?limit=50",
    "summary group_by=product": "/v1/inventory/summary?group_by=product",
    "outliers": "/v1/inventory/outliers",
    "cabling": "/v1/inventory/cabling",
    "/fleet page": "/fleet",
}
"""The endpoints timed on the first request after runs finished."""
PAGE_COLD_PATHS = {
    "/fleet/nodes filtered, sorted": "/fleet/nodes?product=Model+3&sort=-memory_mb",
    "/fleet/outliers": "/fleet/outliers",
    "/fleet/nodes/<name>": "/fleet/nodes/node-00042",
}
"""The pages of issue 50 timed on the first request after a run."""


def new_run(uuids: list[str], round_: int, *, name: str = "") -> dict[str, Any]:
    """A run of one node of the generated fleet as processing writes it
    (the row and the node's pointer), changing what a run changes in
    turn: the BIOS, the memory (an outlier), the cable (another switch
    port) or the model (another peer group)."""
    index = (round_ * 37 + len(name) * 101) % len(uuids)
    kind = round_ % 4
    node_name, record, nics = fleet_rows.generated(
        index,
        bios_version=f"1.{11 + round_}.0" if kind == 0 else "1.10.2",
        memory_mb=65536 if kind == 1 else None,
        port=f"Ethernet{(round_ % 47) + 2}" if kind == 2 else None,
        product=(index + 1) % 8 if kind == 3 else None,
    )
    return fleet_rows.run_row(uuids[index], record, name=node_name, links=nics)


def cold_costs(
    base: str,
    url: str,
    uuids: list[str],
    runs_before: int = 1,
    label: str = "",
    paths: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The first answers after runs finished: before each request
    ``runs_before`` nodes get a new run (written as processing writes
    it), so the fleet view the API process holds changes; only the
    request is timed. The p99 of 40 rounds is the worst one."""
    from inspector.db import engine

    db = engine.Database(url)
    http = requests.Session()
    http.trust_env = False
    results = {}
    suffix = "after a new run" if runs_before == 1 else f"after {runs_before} runs"
    suffix += label
    for name, path in (paths or COLD_PATHS).items():
        took = []
        for index in range(COLD_ROUNDS):
            rows = [
                new_run(uuids, index * runs_before + k, name=name)
                for k in range(runs_before)
            ]
            fleet_rows.insert(db, rows)
            started = time.perf_counter()
            http.get(base + path, timeout=60).raise_for_status()
            took.append((time.perf_counter() - started) * 1000)
        took.sort()
        results[f"{name}, {suffix}"] = {
            "p50_ms": round(statistics.median(took), 2),
            "p99_ms": round(took[-1], 2),  # of 40: the worst
        }
    db.dispose()
    return results


def http_costs(server: InspectorServer, url: str, uuids: list[str]) -> dict[str, Any]:
    base = server.url
    http = requests.Session()
    http.trust_env = False

    def get(path: str) -> Any:
        def call() -> Any:
            resp = http.get(base + path, timeout=30)
            resp.raise_for_status()
            return resp

        return call

    middle = sorted(uuids)[len(uuids) // 2]
    paths = {
        "inventory first page (50)": "/v1/inventory?limit=50",
        "inventory page after marker": f"/v1/inventory?limit=50&marker={middle}",
        "inventory full page (1000)": "/v1/inventory?limit=1000",
        "inventory memory_mb filter": "/v1/inventory?memory_mb=131072&limit=50",
        "inventory fields + filter": "/v1/inventory?fields=uuid,bios_version"
        "&product=Model%203&limit=1000",
        "summary group_by=product": "/v1/inventory/summary?group_by=product",
        "summary group_by=memory_mb": "/v1/inventory/summary?group_by=memory_mb",
        "outliers": "/v1/inventory/outliers",
        "cabling": "/v1/inventory/cabling",
        "/fleet page": "/fleet",
        "/fleet/nodes/<uuid>": f"/fleet/nodes/{middle}",
        **page_paths(http, base, middle, len(uuids)),
    }
    results = {}
    for name, path in paths.items():
        get(path)()  # warm
        results[name] = timed(get(path), ROUNDS)
    results.update(cold_costs(base, url, uuids))
    results.update(cold_costs(base, url, uuids, paths=PAGE_COLD_PATHS))
    results.update(cold_costs(base, url, uuids, runs_before=10))
    results.update(during_whole_reads(server, url, uuids, get))
    outliers = get("/v1/inventory/outliers")().json()["outliers"]
    problems = get("/v1/inventory/cabling")().json()["problems"]
    results["found"] = {"outliers": len(outliers), "cabling problems": len(problems)}
    return results


def page_paths(
    http: requests.Session, base: str, middle: str, nodes: int
) -> dict[str, str]:
    """The /fleet pages of issue 50: each table filtered, sorted, paged
    deep, the search, a node's page by name and its older runs, the
    changes' second page (after the first page's last run)."""
    first = http.get(f"{base}/fleet/changes", timeout=60).text
    older = re.search(r'rel="next" href="\?after=([^"]+)"', first)
    return {
        "/fleet/nodes": "/fleet/nodes",
        "/fleet/nodes product filter, sorted": "/fleet/nodes?product=Model+3"
        "&sort=-memory_mb",
        # half the nodes have 64 CPUs: the middle page of theirs
        "/fleet/nodes fact filter, middle page": "/fleet/nodes?cpus=64"
        f"&sort=bios_version&page={max(nodes // 200, 1)}",
        "/fleet/nodes sorted by time, last page": "/fleet/nodes?sort=-finished_at"
        f"&page={max((nodes + 49) // 50, 1)}",
        "/fleet/nodes search q=node-012": "/fleet/nodes?q=node-012",
        "/fleet/nodes?q=<exact name> (303)": "/fleet/nodes?q=node-00043",
        "/fleet/nodes/<name>": "/fleet/nodes/node-00042",
        "/fleet/nodes/<uuid>?page=1": f"/fleet/nodes/{middle}?page=1",
        "/fleet/outliers": "/fleet/outliers",
        "/fleet/outliers product+fact": "/fleet/outliers?product=Model+0"
        "&fact=memory_mb",
        "/fleet/cabling kind, sorted": "/fleet/cabling?kind=duplicate-port"
        "&sort=-detail",
        "/fleet/changes": "/fleet/changes",
        "/fleet/changes older page": f"/fleet/changes?after={older[1]}"
        if older
        else "/fleet/changes",
    }


WHOLE_READ = "Read the whole fleet view again"


def during_whole_reads(
    server: InspectorServer, url: str, uuids: list[str], get: Callable[[str], Any]
) -> dict[str, Any]:
    """The endpoints while the API process reads the whole view again in
    the background (its safety net, every 5 minutes by default): with
    ``[inventory]full_read_interval`` at 1 s (SIGHUP), a whole read of
    10,000 nodes is under way about half of the time, so many of the
    requests timed meet one. Answered warm, then after a new run."""
    server.reload({"inventory": {"full_read_interval": "1"}})
    reads_before = server.log_file.read_text(errors="replace").count(WHOLE_READ)
    results = {}
    for name, path in COLD_PATHS.items():
        get(path)()
        results[f"{name}, during whole reads"] = timed(get(path), ROUNDS)
    results.update(cold_costs(server.url, url, uuids, label=", during whole reads"))
    reads = server.log_file.read_text(errors="replace").count(WHOLE_READ) - reads_before
    server.reload({"inventory": {"full_read_interval": "300"}})
    results["whole reads"] = {"count": reads}
    return results


def run(
    backends: list[str], nodes: int = 10_000, runs: int = 20
) -> list[dict[str, Any]]:
    results = []
    for kind in backends:
        with tempfile.TemporaryDirectory(prefix=f"history-{kind}-") as tmp:
            work = pathlib.Path(tmp)
            with (
                database(kind, work) as url,
                serving(work / "api", url, dbsync=True) as server,
            ):
                loads = [os.getloadavg()[0]]
                uuids, load = seed(url, nodes, runs)
                entry = {
                    "backend": kind,
                    "nodes": nodes,
                    "runs": nodes * runs,
                    "load_s": round(load, 1),
                    "http": http_costs(server, url, uuids),
                }
                loads.append(os.getloadavg()[0])
                entry["load_average"] = [round(x, 1) for x in loads]
                entry["api_rss_mb"] = peak_rss_mb(server)
                results.append(entry)
                print(report([entry]), flush=True)
    return results


def report(results: list[dict[str, Any]]) -> str:
    lines = []
    for entry in results:
        found = entry["http"]["found"]
        lines.append(
            f"{entry['backend']}: {entry['nodes']} nodes, {entry['runs']} runs "
            f"(loaded in {entry['load_s']} s; standalone peak RSS "
            f"{entry['api_rss_mb']} MiB; {found['outliers']} outliers, "
            f"{found['cabling problems']} cabling problems; load average "
            f"{entry['load_average'][0]} at the start, {entry['load_average'][1]} "
            "at the end)"
        )
        lines.append(
            f"  whole reads of the view during the phase so named: "
            f"{entry['http']['whole reads']['count']}"
        )
        for name, cost in entry["http"].items():
            if name in ("found", "whole reads"):
                continue
            over = ""
            if cost["p99_ms"] > TARGET_MS:
                over = "  OVER 200 ms"
            lines.append(line(name, cost) + over)
    return "\n".join(lines)
