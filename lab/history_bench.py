"""The fleet view at scale: 10,000 nodes with 20 hardware runs each
(200,000 ``hardware_runs`` rows) written straight into the database, then
every inventory endpoint and the /fleet page timed over HTTP on loopback,
one request at a time, on SQLite and PostgreSQL (``make bench
BENCH_SCALE=history``). Prints numbers, asserts nothing.
"""

import pathlib
import statistics
import tempfile
import time
from typing import Any

import requests
import sqlalchemy as sa

from lab import fleet_rows, loopback, procstat
from lab.inspector_server import InspectorServer
from lab.scale_bench import _database, _line, _timed

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


COLD_ROUNDS = 30


def cold_costs(base: str, url: str, uuids: list[str]) -> dict[str, Any]:
    """The first answers after a run finished: before each request one
    node gets a new run (written as processing writes it), so the cached
    fleet view is read again; only the request is timed."""
    from inspector.db import engine

    db = engine.Database(url)
    http = requests.Session()
    http.trust_env = False
    results = {}
    for name, path in (
        ("outliers, after a new run", "/v1/inventory/outliers"),
        ("/fleet page, after a new run", "/fleet"),
    ):
        took = []
        for index in range(COLD_ROUNDS):
            node = uuids[index * 37 % len(uuids)]
            record = fleet_rows.machine(product=f"Model {index % 8}")
            fleet_rows.insert(db, [fleet_rows.run_row(node, record, name=node[:8])])
            started = time.perf_counter()
            http.get(base + path, timeout=60).raise_for_status()
            took.append((time.perf_counter() - started) * 1000)
        took.sort()
        results[name] = {
            "p50_ms": round(statistics.median(took), 2),
            "p99_ms": round(took[-1], 2),  # of 30: the worst
        }
    db.dispose()
    return results


def http_costs(base: str, url: str, uuids: list[str]) -> dict[str, Any]:
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
    }
    results = {}
    for name, path in paths.items():
        get(path)()  # warm
        results[name] = _timed(get(path), ROUNDS)
    results.update(cold_costs(base, url, uuids))
    outliers = get("/v1/inventory/outliers")().json()["outliers"]
    problems = get("/v1/inventory/cabling")().json()["problems"]
    results["found"] = {"outliers": len(outliers), "cabling problems": len(problems)}
    return results


def run(
    backends: list[str], nodes: int = 10_000, runs: int = 20
) -> list[dict[str, Any]]:
    results = []
    for kind in backends:
        with tempfile.TemporaryDirectory(prefix=f"history-{kind}-") as tmp:
            work = pathlib.Path(tmp)
            with _database(kind, work) as url:
                server = InspectorServer(
                    work / "api",
                    # nothing here calls Ironic: a closed port
                    ironic_url=f"http://127.0.0.1:{loopback.free_port()}",
                    database_url=url,
                )
                (work / "api").mkdir()
                server.start(dbsync=True)
                try:
                    uuids, load = seed(url, nodes, runs)
                    entry = {
                        "backend": kind,
                        "nodes": nodes,
                        "runs": nodes * runs,
                        "load_s": round(load, 1),
                        "http": http_costs(server.url, url, uuids),
                    }
                    assert server.pid is not None
                    entry["api_rss_mb"] = round(procstat.peak_rss_mb(server.pid), 1)
                finally:
                    server.stop()
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
            f"{found['cabling problems']} cabling problems)"
        )
        for name, cost in entry["http"].items():
            if name == "found":
                continue
            over = ""
            if cost["p99_ms"] > TARGET_MS and "new run" not in name:
                over = "  OVER 200 ms"
            lines.append(_line(name, cost) + over)
    return "\n".join(lines)
