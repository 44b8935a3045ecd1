"""The benchmark: N machines at once through one shape, with numbers.

Prints a table and writes JSON. Targets are stated in the issues; this only
measures (no pass/fail), so it never flakes: compare the numbers.
"""

import concurrent.futures
import contextlib
import dataclasses
import json
import pathlib
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from typing import Any

from lab import cpu_profile, ironic_calls, machines, procstat, wall_time
from lab.demo import DemoOptions, Running, start_all, start_inspector, states
from lab.enroll import IronicAPI, enroll
from lab.ironic_server import IronicServer, default_cache_dir
from lab.ironic_standin import StandinServer
from lab.postgres_server import PostgresServer
from lab.ramdisk import RamdiskPlayer

WRK_SECONDS = 5
LISTING_INTERVAL = 0.5
"""Seconds between the benchmark's looks at the listing while the machines
run (0.2 before the run's end came from the service's finished_at)."""


@dataclasses.dataclass
class BenchOptions:
    machines: int = 50
    split: int | None = None
    seed: int = 0
    output: pathlib.Path | None = None
    timeout: float = 300.0
    poll_interval: float | None = None
    """Seconds between the ramdisk player's looks at Ironic's power states;
    by default 0.5 against a real Ironic (the bottleneck: the watch's load
    stays off it) and 0.05 against the stand-in (a listing is answered at
    once, in its own process, whose CPU is not counted)."""
    split_api: str = "apache"
    rpc_transport: str = "oslo"
    profile_ironic: bool = True
    """Replay the inspector's kinds of Ironic calls afterwards to price them."""
    upstream: bool = False
    """Run upstream ironic-inspector (PyPI) standalone instead of ours."""
    standin: bool = False
    """Run against the instant Ironic stand-in instead of a real Ironic."""
    ironic_production: bool = False
    """Run Ironic as production does: API workers, a separate conductor
    over JSON-RPC, PostgreSQL."""
    profile_dir: pathlib.Path | None = None
    """Sample every inspector process with py-spy while the machines run."""


def _percentile(values: list[float], pct: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered)) - 1))
    return ordered[index]


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


def coordination_costs(backend_url: str, rounds: int = 200) -> dict[str, Any]:
    """etcd lock acquire+release and member listing, as the services do them."""
    from tooz import coordination

    from inspector.coordination import etcd_session
    from inspector.coordination.backend import GROUP_ID, direct_access
    from inspector.coordination.members import GroupMembers
    from inspector.locking import factory

    coordinator = coordination.get_coordinator(backend_url, b"bench")
    _, client = direct_access(coordinator)
    if client is not None:  # as the services do
        etcd_session.install(client)
    coordinator.start()
    locks = factory.for_coordinator(coordinator)  # the services' own locks
    try:
        lock_ms = []
        for index in range(rounds):
            node_lock = locks.get_lock(f"bench-{index}")
            started = time.perf_counter()
            node_lock.acquire(blocking=False)
            node_lock.release()
            lock_ms.append((time.perf_counter() - started) * 1000)
        members = GroupMembers(coordinator, ttl=2.0)
        uncached, cached = [], []
        for _ in range(rounds):
            started = time.perf_counter()
            coordinator.get_members(GROUP_ID).get()
            uncached.append((time.perf_counter() - started) * 1000)
        members.pick()
        for _ in range(rounds):
            started = time.perf_counter()
            members.pick()
            cached.append((time.perf_counter() - started) * 1000)
        handoff = lock_handoff_ms(backend_url)
    finally:
        locks.stop()
        coordinator.stop()
    return {
        "lock_handoff_ms": {
            "p50": statistics.median(handoff),
            "max": max(handoff),
        },
        "lock_acquire_release_ms": {
            "p50": statistics.median(lock_ms),
            "p99": _percentile(lock_ms, 99),
        },
        "get_members_ms": {
            "p50": statistics.median(uncached),
            "p99": _percentile(uncached, 99),
        },
        "pick_conductor_cached_ms": {
            "p50": statistics.median(cached),
            "p99": _percentile(cached, 99),
        },
    }


def cast_costs(config_file: pathlib.Path, rounds: int = 300) -> dict[str, Any]:
    """How long the API waits for one cast, measured with the API's own
    client built from its configuration: RabbitMQ returns once the broker
    has the message; JSON-RPC once the conductor has looked the step up
    (an unknown node here, so nothing else runs)."""
    import uuid as uuid_lib

    from oslo_config import cfg

    from inspector import bootstrap
    from inspector.server import wiring

    # the global CONF, as the services: oslo.messaging registers some of its
    # options there only; cleared first, as an earlier shape parsed it
    cfg.CONF.clear()
    conf = bootstrap.parse_config(["--config-file", str(config_file)])
    service = wiring.api(conf)
    try:
        rpc = service.runtime.rpc
        assert rpc is not None
        rpc.process(str(uuid_lib.uuid4()), 1)  # connections open
        took = []
        for _ in range(rounds):
            uuid = str(uuid_lib.uuid4())
            started = time.perf_counter()
            rpc.process(uuid, 1)
            took.append((time.perf_counter() - started) * 1000)
        # many API threads at once, as under a burst of ramdisks
        burst = rounds * 4
        started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
            list(
                pool.map(lambda _i: rpc.process(str(uuid_lib.uuid4()), 1), range(burst))
            )
        per_s = burst / (time.perf_counter() - started)
    finally:
        service.stop()
    return {
        "casts": rounds,
        "p50_ms": round(statistics.median(took), 2),
        "p99_ms": round(_percentile(took, 99), 2),
        f"casts_per_s_{THREADS}_threads": round(per_s),
    }


THREADS = 8
"""API threads casting at once in the burst measurement."""


def api_import_seconds(rounds: int = 3) -> float:
    """Median seconds a fresh interpreter takes to import the API's modules."""
    import sys

    code = (
        "import time; t = time.perf_counter()\n"
        "from inspector import bootstrap; bootstrap.select_threading_backend()\n"
        "import inspector.server.wiring, inspector.api.app\n"
        "print(time.perf_counter() - t)"
    )
    times = []
    for _ in range(rounds):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        times.append(float(out.strip()))
    return round(statistics.median(times), 3)


def lock_handoff_ms(backend_url: str, rounds: int = 10) -> list[float]:
    """Time from one process releasing a node lock to another, blocked on
    it, holding it (two coordinators, as two conductors would be), through
    the services' own lock class."""
    import threading

    from tooz import coordination

    from inspector.locking.factory import for_coordinator

    holder = coordination.get_coordinator(backend_url, b"bench-holder")
    waiter = coordination.get_coordinator(backend_url, b"bench-waiter")
    holder.start()
    waiter.start()
    holder_locks, waiter_locks = for_coordinator(holder), for_coordinator(waiter)
    results = []
    try:
        for index in range(rounds):
            name = f"handoff-{index}"
            held = holder_locks.get_lock(name)
            held.acquire()
            got = threading.Event()
            acquired_at = [0.0]

            def wait_for_it(
                lock_name: str, stamp: list[float], done: threading.Event
            ) -> None:
                lock = waiter_locks.get_lock(lock_name)
                lock.acquire(blocking=True)
                stamp[0] = time.perf_counter()
                done.set()
                lock.release()

            thread = threading.Thread(target=wait_for_it, args=(name, acquired_at, got))
            thread.start()
            time.sleep(0.3)  # the waiter is blocked by now
            released_at = time.perf_counter()
            held.release()
            got.wait(30)
            thread.join(30)
            results.append((acquired_at[0] - released_at) * 1000)
    finally:
        holder_locks.stop()
        waiter_locks.stop()
        holder.stop()
        waiter.stop()
    return results


def database_sessions(url: str) -> int | None:
    """Connections PostgreSQL has accepted into the database of ``url`` so
    far (``pg_stat_database.sessions``): during a run, the connections the
    services' pools opened (each a TCP handshake, an authentication and a
    server process)."""
    import psycopg2

    name = url.rsplit("/", 1)[1]
    dsn = url.replace("postgresql+psycopg2://", "postgresql://")
    with contextlib.closing(psycopg2.connect(dsn)) as conn, conn.cursor() as cur:
        cur.execute("SELECT sessions FROM pg_stat_database WHERE datname = %s", (name,))
        row = cur.fetchone()
    return None if row is None else int(row[0])


def _start_upstream(work: pathlib.Path, ironic_url: str, stack: Any) -> Running:
    from lab import upstream_server

    server = upstream_server.UpstreamServer(
        work / "upstream", ironic_url, upstream_server.install()
    )
    server.start()
    stack.callback(server.stop)
    assert server.pid is not None
    pids = {"upstream": server.pid}
    return Running(server.url, pids, pids)


def run(options: BenchOptions) -> dict[str, Any]:
    work = pathlib.Path(tempfile.mkdtemp(prefix="inspector-bench-"))
    shape = "standalone" if options.split is None else f"split-{options.split}"
    if options.upstream:
        shape = "upstream"
    if options.split is not None and options.rpc_transport != "oslo":
        shape += f"-{options.rpc_transport}"
    if options.split is not None and options.split_api != "apache":
        shape += f"-{options.split_api}"
    result: dict[str, Any] = {"shape": shape, "machines": options.machines}
    with contextlib.ExitStack() as stack:
        ironic: IronicServer | StandinServer
        if options.standin:
            ironic = StandinServer(work / "ironic")
            result["ironic"] = "stand-in"
        elif options.ironic_production:
            pg = PostgresServer(work / "ironic-pg", database="ironic")
            pg.start()
            stack.callback(pg.stop)
            ironic = IronicServer(
                default_cache_dir(), work / "ironic", database_url=pg.url
            )
            result["ironic"] = "production shape"
        else:
            ironic = IronicServer(default_cache_dir(), work / "ironic")
        ironic.start()
        stack.callback(ironic.stop)
        demo_options = DemoOptions(
            machines=options.machines,
            split=options.split,
            split_api=options.split_api,
            rpc_transport=options.rpc_transport,
        )
        if options.upstream:
            running = _start_upstream(work, ironic.url, stack)
        else:
            running = start_inspector(demo_options, work, ironic.url, stack)
        url = running.url
        api = IronicAPI(ironic.url)
        lab = machines.make_lab(options.machines, options.seed)
        uuids = enroll(api, lab)
        # the player stands in for the ramdisks by watching Ironic: a machine
        # boots when its power-on is seen, up to one interval late
        watch = options.poll_interval
        if watch is None:
            watch = 0.05 if options.standin else 0.5
        player = RamdiskPlayer(api, url, lab, seed=options.seed, poll_interval=watch)
        player.start()
        stack.callback(player.stop)
        assert ironic.pid is not None
        watched = {"Ironic": ironic.pid, **running.cpu_pids}
        cpu_before = {name: procstat.cpu_seconds(pid) for name, pid in watched.items()}
        host_before = procstat.host_cpu_ticks()
        access = ironic_calls.AccessLog(ironic.log_file)
        profiler = None
        if options.profile_dir is not None:
            profiler = cpu_profile.Profiler(
                options.profile_dir / shape, running.cpu_pids
            )
            profiler.start()
        sessions = None
        if running.cluster is not None:
            sessions = database_sessions(running.cluster.database_url)
        started = time.monotonic()
        clocks = (started, time.time())
        answered = start_all(url, list(uuids.values()), workers=options.machines)
        deadline = started + options.timeout
        final: dict[str, dict[str, Any]] = {}
        while time.monotonic() < deadline:
            final = states(url)
            if len(final) == len(lab) and all(s["finished"] for s in final.values()):
                break
            # each look lists every introspection: CPU of the inspector
            # counted in its cost per machine, so not too often (the end
            # is the service's own finished_at, not when this look sees it)
            time.sleep(LISTING_INTERVAL)
        seen = time.monotonic() - started
        # the service's own record of the last finish: the listing above
        # sees it up to LISTING_INTERVAL later, a lag of the lab's (the
        # same for every shape; kept as all_finished_seen_s)
        recorded = wall_time.service_elapsed(clocks, final)
        elapsed = seen if recorded is None else min(seen, recorded)
        if sessions is not None and running.cluster is not None:
            opened = database_sessions(running.cluster.database_url)
            # the bench's own look counts one; PostgreSQL's statistics
            # may lag a second behind its backends
            result["database_connections_opened"] = (opened or 0) - sessions
        if profiler is not None:
            profiler.stop()
            result["profile"] = profiler.report()
        host_after = procstat.host_cpu_ticks()
        busy = host_after[0] - host_before[0]
        total = max(1, host_after[1] - host_before[1])
        result["host_cpu_busy_pct"] = round(100 * busy / total, 1)
        finished = sum(1 for s in final.values() if s["state"] == "finished")
        latencies = [x * 1000 for x in player.latencies()]
        result.update(
            all_finished_s=round(elapsed, 2),
            all_finished_seen_s=round(seen, 2),
            player_poll_s=watch,
            finished=finished,
            errors=sum(1 for s in final.values() if s["state"] == "error"),
            machines_per_s=round(finished / elapsed, 2),
            continue_ms={
                "p50": round(statistics.median(latencies), 1) if latencies else None,
                "p99": round(_percentile(latencies, 99), 1) if latencies else None,
            },
            cpu_seconds={
                name: round(procstat.cpu_seconds(pid) - cpu_before[name], 2)
                for name, pid in watched.items()
            },
        )
        result["wall_time_legs"] = wall_time.breakdown(
            clocks, answered, list(player.callbacks), uuids, final, seen
        )
        ours = sum(
            seconds
            for name, seconds in result["cpu_seconds"].items()
            if name not in ("Ironic", "RabbitMQ")
        )
        # every inspector process (API, conductors), per finished machine
        result["inspector_cpu_ms_per_machine"] = round(
            ours * 1000 / max(1, finished), 1
        )
        player.stop()
        calls = access.calls()
        result["ironic_calls_per_machine"] = round(
            sum(calls.values()) / max(1, finished), 1
        )
        result["ironic_calls"] = dict(calls.most_common())
        some = next(iter(uuids.values()))
        # the processes that answer it (not the conductors, not the broker)
        serving = [
            pid
            for name, pid in running.cpu_pids.items()
            if name in ("inspector", "API", "upstream")
        ]
        result["status_get"] = status_get_load(
            f"{url}/v1/introspection/{some}", serving
        )
        result["peak_rss_mib"] = {
            name: round(procstat.peak_rss_mb(pid))
            for name, pid in running.rss_pids.items()
        }
        if options.profile_ironic:
            result["ironic_cpu_ms_per_call"] = ironic_calls.cpu_per_call(
                ironic.url, ironic.pid, list(uuids.values())
            )
        result["api_import_s"] = api_import_seconds()
        if running.cluster is not None:
            result["coordination"] = coordination_costs(running.cluster.backend_url)
            assert running.cluster.api is not None
            result["cast_ms"] = cast_costs(running.cluster.api.config_file)
    shutil.rmtree(work, ignore_errors=True)
    return result


def report(results: list[dict[str, Any]]) -> str:
    lines = [
        f"{'shape':<12} {'machines':>8} {'all done s':>10} {'mach/s':>7} "
        f"{'continue p50/p99 ms':>20} {'GET r/s @1/10/50':>22} {'GET p99 ms @10':>14}"
    ]
    for r in results:
        get = r.get("status_get", {})
        rps = "/".join(
            f"{get[c]['requests_per_s']:.0f}" if c in get else "-"
            for c in ("1", "10", "50")
        )
        p99 = f"{get['10']['p99_ms']:.1f}" if "10" in get else "-"
        cont = r["continue_ms"]
        lines.append(
            f"{r['shape']:<12} {r['machines']:>8} {r['all_finished_s']:>10} "
            f"{r['machines_per_s']:>7} {str(cont['p50']) + '/' + str(cont['p99']):>20} "
            f"{rps:>22} {p99:>14}"
        )
    for r in results:
        lines.append(
            f"{r['shape']}: inspector CPU per machine "
            f"{r['inspector_cpu_ms_per_machine']} ms (all its processes)"
        )
        lines.append(
            f"{r['shape']}: CPU s {r['cpu_seconds']}; host CPU busy "
            f"{r['host_cpu_busy_pct']}%; peak RSS MiB {r['peak_rss_mib']}; "
            f"API import {r['api_import_s']} s"
        )
        lines.append(
            f"{r['shape']}: {r['ironic_calls_per_machine']} Ironic calls per "
            f"machine: {json.dumps(r['ironic_calls'])}"
        )
        get = r.get("status_get", {})
        if any("cpu_us_per_request" in get.get(c, {}) for c in ("1", "10", "50")):
            cpu = "/".join(
                f"{get[c].get('cpu_us_per_request', '-')}" if c in get else "-"
                for c in ("1", "10", "50")
            )
            lines.append(
                f"{r['shape']}: status GET CPU us per request @1/10/50 conns "
                f"{cpu} (the serving process)"
            )
        if "wall_time_legs" in r:
            lines.append(wall_time.describe(r["shape"], r["wall_time_legs"]))
        if "ironic_cpu_ms_per_call" in r:
            lines.append(
                f"{r['shape']}: Ironic CPU ms per call (idle, one at a time): "
                f"{json.dumps(r['ironic_cpu_ms_per_call'])}"
            )
        if "database_connections_opened" in r:
            lines.append(
                f"{r['shape']}: PostgreSQL connections opened during the run: "
                f"{r['database_connections_opened']}"
            )
        if "coordination" in r:
            lines.append(f"{r['shape']}: coordination {json.dumps(r['coordination'])}")
        if "cast_ms" in r:
            lines.append(
                f"{r['shape']}: one cast, as the API waits for it "
                f"{json.dumps(r['cast_ms'])}"
            )
        if "profile" in r:
            lines.append(f"{r['shape']}: where the CPU went (py-spy --gil)")
            lines.append(r["profile"])
    return "\n".join(lines)
