"""The benchmark: N machines at once through one shape, with numbers.

Prints a table and writes JSON. Targets are stated in the issues; this only
measures (no pass/fail), so it never flakes: compare the numbers.
"""

import contextlib
import dataclasses
import json
import pathlib
import shutil
import statistics
import subprocess
import tempfile
import time
from typing import Any

from lab import procstat
from lab.bench import cpu_profile, ironic_calls, wall_time
from lab.bench.split_costs import cast_costs, coordination_costs, database_sessions
from lab.bench.stats import percentile
from lab.bench.status_load import status_get_load
from lab.introspections import start_all, states
from lab.machines import hardware
from lab.machines.enroll import IronicAPI, enroll
from lab.machines.ramdisk import RamdiskPlayer
from lab.servers import shapes
from lab.servers.ironic import IronicServer
from lab.servers.ironic_log import AccessLog
from lab.servers.ironic_standin import StandinServer
from lab.servers.postgres import PostgresServer
from lab.servers.shapes import Running
from lab.venvs import default_cache_dir

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

    @property
    def shape(self) -> shapes.Shape:
        return shapes.Shape(self.split, self.split_api, self.rpc_transport)


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


def _start_upstream(work: pathlib.Path, ironic_url: str, stack: Any) -> Running:
    from lab.servers import upstream

    server = upstream.UpstreamServer(work / "upstream", ironic_url, upstream.install())
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
        if options.upstream:
            running = _start_upstream(work, ironic.url, stack)
        else:
            running = shapes.start(options.shape, work, ironic.url, stack)
        url = running.url
        api = IronicAPI(ironic.url)
        lab = hardware.make_lab(options.machines, options.seed)
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
        access = AccessLog(ironic.log_file)
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
                "p99": round(percentile(latencies, 99), 1) if latencies else None,
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
