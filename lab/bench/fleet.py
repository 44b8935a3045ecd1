"""The fleet-scale run: many nodes in Ironic, introspections started in
bursts, every one accounted for (``make bench BENCH_SCALE=fleet``).

Ironic holds ``nodes`` nodes (each with its PXE port); ``introspect`` of
them are started in bursts of ``burst``, one burst every
``burst_interval`` seconds, and followed until all are finished. Reports
start-to-finished p50/p99 (from the statuses' own ``started_at`` and
``finished_at``), Ironic calls per machine, each process's CPU and peak
RSS, and what the periodic work's Ironic listings cost at this size (the
reconcile's node listing and the PXE filter's port listing, made with the
service's own client). Measures only.

With the real Ironic (``--ironic real``) the enrolled fleet is kept in the
lab's cache and reused: the first run enrolls it (about 0.2 s of Ironic
per node, so over half an hour for 10,000 on this machine), later runs
start at once. The stand-in (``--ironic standin``, the default) enrolls
10,000 nodes in seconds and takes Ironic's cost out of the numbers.
"""

import concurrent.futures
import contextlib
import dataclasses
import datetime
import pathlib
import shutil
import statistics
import tempfile
import time
from typing import Any

from lab import procstat
from lab.bench.stats import percentile
from lab.introspections import start_all, states
from lab.machines import hardware
from lab.machines.enroll import IronicAPI, enroll
from lab.machines.ramdisk import RamdiskPlayer
from lab.servers import shapes
from lab.servers.ironic import IronicServer
from lab.servers.ironic_log import AccessLog
from lab.servers.ironic_standin import StandinServer
from lab.venvs import default_cache_dir


@dataclasses.dataclass
class FleetOptions:
    nodes: int = 10_000
    introspect: int = 1_000
    burst: int = 200
    burst_interval: float = 10.0
    split: int | None = None
    ironic: str = "standin"
    timeout: float = 1800.0
    seed: int = 0


def _ironic(options: FleetOptions, work: pathlib.Path, stack: Any) -> Any:
    if options.ironic == "standin":
        server: Any = StandinServer(work / "ironic")
    else:
        # kept between runs: enrolling a fleet into the real Ironic is slow
        server = IronicServer(
            default_cache_dir(), default_cache_dir() / f"fleet-{options.nodes}"
        )
    server.start()
    stack.callback(server.stop)
    return server


def _enrolled(api: IronicAPI, lab: list[hardware.Machine]) -> dict[str, str]:
    """Node UUIDs by machine name, enrolling only the machines missing."""
    known = {n["name"]: n["uuid"] for n in api.nodes("uuid,name")}
    missing = [m for m in lab if m.name not in known]
    if missing:
        print(f"Enrolling {len(missing)} nodes ...", flush=True)
        known.update(enroll(api, missing, workers=16))
    return {m.name: known[m.name] for m in lab}


def _latencies(items: dict[str, dict[str, Any]]) -> list[float]:
    def when(text: str) -> datetime.datetime:
        return datetime.datetime.fromisoformat(text)

    return sorted(
        (when(s["finished_at"]) - when(s["started_at"])).total_seconds()
        for s in items.values()
        if s.get("finished_at") and s.get("started_at")
    )


def run(options: FleetOptions) -> dict[str, Any]:
    work = pathlib.Path(tempfile.mkdtemp(prefix="inspector-fleet-"))
    result: dict[str, Any] = dataclasses.asdict(options)
    with contextlib.ExitStack() as stack:
        ironic = _ironic(options, work, stack)
        api = IronicAPI(ironic.url)
        lab = hardware.make_lab(options.nodes, options.seed)
        for machine in lab:
            machine.enroll_port = True  # every node of a fleet has its port
        started = time.monotonic()
        uuids = _enrolled(api, lab)
        result["enroll_s"] = round(time.monotonic() - started, 1)
        running = shapes.start(shapes.Shape(options.split), work, ironic.url, stack)
        chosen = lab[: options.introspect]
        player = RamdiskPlayer(
            api, running.url, chosen, poll_interval=0.5, watch_recent=options.burst * 3
        )
        player.start()
        stack.callback(player.stop)
        watched = {"Ironic": ironic.pid, **running.cpu_pids}
        cpu_before = {name: procstat.cpu_seconds(pid) for name, pid in watched.items()}
        access = AccessLog(ironic.log_file)
        began = time.monotonic()
        bursts = [
            chosen[i : i + options.burst] for i in range(0, len(chosen), options.burst)
        ]
        with concurrent.futures.ThreadPoolExecutor(len(bursts)) as pool:
            for index, burst in enumerate(bursts):
                wait = began + index * options.burst_interval - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                pool.submit(
                    start_all,
                    running.url,
                    [uuids[m.name] for m in burst],
                    workers=min(32, len(burst)),
                )
        final: dict[str, dict[str, Any]] = {}
        wanted = {uuids[m.name] for m in chosen}
        deadline = began + options.timeout
        while time.monotonic() < deadline:
            final = {u: s for u, s in states(running.url).items() if u in wanted}
            if len(final) == len(wanted) and all(s["finished"] for s in final.values()):
                break
            time.sleep(1.0)
        elapsed = time.monotonic() - began
        finished = sum(1 for s in final.values() if s["state"] == "finished")
        latencies = _latencies(final)
        calls = access.calls()
        result.update(
            all_finished_s=round(elapsed, 1),
            finished=finished,
            errors=sum(1 for s in final.values() if s["state"] == "error"),
            lost=len(wanted) - len(final),
            machines_per_s=round(finished / elapsed, 2),
            start_to_finished_s={
                "p50": round(statistics.median(latencies), 2) if latencies else None,
                "p99": round(percentile(latencies, 99), 2) if latencies else None,
            },
            ironic_calls_per_machine=round(sum(calls.values()) / max(1, finished), 2),
            ironic_calls=dict(calls.most_common()),
            cpu_seconds={
                name: round(procstat.cpu_seconds(pid) - cpu_before[name], 1)
                for name, pid in watched.items()
            },
            peak_rss_mib={
                name: round(procstat.peak_rss_mb(pid))
                for name, pid in {"Ironic": ironic.pid, **running.rss_pids}.items()
            },
            periodic_listings=_listings(ironic.url),
        )
    if result["lost"] == 0:
        shutil.rmtree(work, ignore_errors=True)
    return result


def _listings(ironic_url: str) -> dict[str, Any]:
    """The periodic work's Ironic side at this size, with the service's
    own client: the reconcile's node listing, the PXE repair's ports."""
    from oslo_config import cfg

    from inspector.baremetal.client import BaremetalClient
    from inspector.conf import opts

    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    conf([])
    conf.set_override("auth_type", "none", group="ironic")
    conf.set_override("endpoint_override", ironic_url, group="ironic")
    client = BaremetalClient(conf)
    found: dict[str, Any] = {}
    for name, call in (
        ("reconcile: every node UUID", client.list_node_uuids),
        ("PXE filter repair: every port address", client.list_port_addresses),
    ):
        began = time.perf_counter()
        count = len(call())
        found[name] = {"items": count, "seconds": round(time.perf_counter() - began, 2)}
    return found


def report(result: dict[str, Any]) -> str:
    lat = result["start_to_finished_s"]
    shape = f"split-{result['split']}" if result["split"] else "standalone"
    lines = [
        f"{result['introspect']} of {result['nodes']} nodes ({result['ironic']} "
        f"Ironic, {shape}), bursts of {result['burst']} every "
        f"{result['burst_interval']} s:",
        f"  finished {result['finished']}, errors {result['errors']}, lost "
        f"{result['lost']}, all done in {result['all_finished_s']} s "
        f"({result['machines_per_s']} machines/s)",
        f"  start -> finished p50 {lat['p50']} s, p99 {lat['p99']} s",
        f"  Ironic calls per machine {result['ironic_calls_per_machine']}",
        f"  CPU s {result['cpu_seconds']}; peak RSS MiB {result['peak_rss_mib']}",
        f"  periodic listings at this size {result['periodic_listings']}",
    ]
    return "\n".join(lines)
