"""The cost of a long history: listing pages, the metrics scrape, the
periodic sweeps' queries and the API's memory at 1k and 200k records, on
SQLite and PostgreSQL.

Records are written straight into the database (nine in ten finished, the
rest in error, plus a few running), then a standalone ``ironic-inspector``
serves them; the requests go over HTTP on loopback, one at a time. Prints
numbers, asserts nothing.
"""

import contextlib
import datetime
import pathlib
import tempfile
import uuid as uuidlib
from collections.abc import Callable, Iterator
from typing import Any

import requests
import sqlalchemy as sa

from lab import procstat
from lab.bench.stats import line, timed
from lab.servers import loopback
from lab.servers.inspector import InspectorServer
from lab.servers.postgres import PostgresServer

RUNNING = 20
"""Introspections waiting for their ramdisk at every size."""
ROUNDS = 300


def _rows(start: int, count: int, now: datetime.datetime) -> list[dict[str, Any]]:
    return [
        {
            "uuid": str(uuidlib.UUID(int=index + 1, version=4)),
            "state": "error" if index % 10 == 0 else "finished",
            "version": 3,
            "started_at": now - datetime.timedelta(seconds=index * 30 + 600),
            "finished_at": now - datetime.timedelta(seconds=index * 30 + 300),
            "manage_boot": True,
        }
        for index in range(start, start + count)
    ]


def seed(url: str, have: int, want: int) -> None:
    """Grow the history from ``have`` to ``want`` records (and the running
    ones, the first time)."""
    from inspector.db import models

    engine = sa.create_engine(url)
    now = models.utcnow()
    with engine.begin() as conn:
        for start in range(have, want, 10_000):
            count = min(10_000, want - start)
            conn.execute(sa.insert(models.Introspection), _rows(start, count, now))
        if have == 0:
            conn.execute(
                sa.insert(models.Introspection),
                [
                    {
                        "uuid": str(uuidlib.uuid4()),
                        "state": "waiting",
                        "version": 2,
                        "started_at": now,
                        "manage_boot": True,
                    }
                    for _ in range(RUNNING)
                ],
            )
    if engine.dialect.name == "postgresql":
        # what autovacuum does within a minute of a bulk load: without
        # statistics the planner scans the table for the owed writes
        # (16-21 ms at 200k) instead of using their partial index (0.01 ms)
        with engine.begin() as conn:
            conn.execute(sa.text("ANALYZE introspections"))
    engine.dispose()


def http_costs(base: str) -> dict[str, Any]:
    http = requests.Session()
    http.trust_env = False

    def get(path: str) -> Callable[[], Any]:
        def call() -> Any:
            resp = http.get(base + path, timeout=30)
            resp.raise_for_status()
            return resp

        return call

    page = get("/v1/introspection?limit=1000")().json()["introspection"]
    middle = page[len(page) // 2]["uuid"]
    paths = {
        "list first page": "/v1/introspection?limit=50",
        "list page after a marker": f"/v1/introspection?limit=50&marker={middle}",
        "list state=error": "/v1/introspection?limit=50&state=error",
        "list state=finished,error": "/v1/introspection?limit=50&state=finished,error",
        "list state=waiting": "/v1/introspection?limit=50&state=waiting",
        "status GET": f"/v1/introspection/{middle}",
    }
    results = {name: timed(get(path), ROUNDS) for name, path in paths.items()}
    # the first scrape counts the finished and failed ones (then once a
    # minute); the others count the work in progress only
    results["metrics scrape"] = timed(get("/metrics"), 50)
    return results


def sweep_costs(url: str) -> dict[str, Any]:
    """The periodic work's database side, as the conductor runs it:
    statements and time per sweep."""
    from inspector import states
    from inspector.db import engine as engine_mod
    from inspector.db import sweeps

    db = engine_mod.Database(url)
    statements = [0]
    sa.event.listen(
        db.engine,
        "before_cursor_execute",
        lambda *_: statements.__setitem__(0, statements[0] + 1),
    )
    long_ago = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    duties: dict[str, Callable[[], Any]] = {
        "timeout sweep": lambda: sweeps.timed_out(
            db, long_ago - datetime.timedelta(hours=1)
        ),
        "takeover sweep": lambda: sweeps.working(db),
        "reconcile: owed writes": lambda: sweeps.owing(db),
        "metrics: work in progress (every scrape)": lambda: sweeps.count_by_state(
            db, only=states.TRANSIENT
        ),
        "metrics: finished and error (once a minute)": lambda: sweeps.count_by_state(
            db, only=states.FINAL
        ),
    }
    results = {}
    for name, sweep in duties.items():
        sweep()  # warm the pool
        statements[0] = 0
        timing = timed(sweep, 20)
        results[name] = {**timing, "statements": statements[0] // 20}
    db.engine.dispose()
    return results


@contextlib.contextmanager
def database(kind: str, work: pathlib.Path) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{work / 'inspector.sqlite'}"
        return
    with PostgresServer(work / "pg") as pg:
        yield pg.url


@contextlib.contextmanager
def serving(
    work: pathlib.Path,
    database_url: str,
    dbsync: bool,
    options: dict[str, dict[str, str]] | None = None,
) -> Iterator[InspectorServer]:
    """The standalone process on ``database_url``, up until the block ends;
    no Ironic behind it (nothing here calls it: a closed port)."""
    server = InspectorServer(
        work,
        ironic_url=f"http://127.0.0.1:{loopback.free_port()}",
        database_url=database_url,
        options=options,
    )
    server.start(dbsync=dbsync)
    try:
        yield server
    finally:
        server.stop()


def peak_rss_mb(server: InspectorServer) -> float:
    assert server.pid is not None
    return round(procstat.peak_rss_mb(server.pid), 1)


def run(sizes: list[int], backends: list[str]) -> list[dict[str, Any]]:
    results = []
    # the sweeps run every second over the whole history, so the peak RSS
    # includes them
    options = {
        "DEFAULT": {"clean_up_period": "1"},
        "coordination": {"sweep_interval": "1"},
    }
    for kind in backends:
        with tempfile.TemporaryDirectory(prefix=f"scale-{kind}-") as tmp:
            work = pathlib.Path(tmp)
            with database(kind, work) as url:
                have = 0
                for size in sizes:
                    api = work / f"api-{size}"
                    with serving(api, url, dbsync=have == 0, options=options) as server:
                        if have == 0 or size > have:
                            seed(url, have, size)
                            have = size
                        entry = {
                            "backend": kind,
                            "records": size + RUNNING,
                            "http": http_costs(server.url),
                            "sweeps": sweep_costs(url),
                            "api_rss_mb": peak_rss_mb(server),
                        }
                    results.append(entry)
                    print(report([entry]), flush=True)
    return results


def report(results: list[dict[str, Any]]) -> str:
    lines = []
    for entry in results:
        lines.append(
            f"{entry['backend']}, {entry['records']} records "
            f"(standalone peak RSS {entry['api_rss_mb']} MiB)"
        )
        for name, cost in entry["http"].items():
            lines.append(line(name, cost))
        for name, cost in entry["sweeps"].items():
            lines.append(line(name, cost) + f"  {cost['statements']} statement(s)")
    return "\n".join(lines)
