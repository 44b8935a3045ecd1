"""The out-of-band benchmark (``make bench BENCH_SCALE=redfish`` and
``BENCH_SCALE=redfish-1000``): N lab machines, each a Redfish system,
introspected out of band at once; the inspector's CPU per machine (the
process tree's user + system time during the run) and the wall time from
the first start to the last ``finished``. The BMCs' and Ironic's CPU are
reported beside it: on this machine they share the same cores.

The BMCs (``bmcs``): ``emulator``, sushy-tools' emulator over libvirt's
test driver (one Flask process, one address for every system), or
``fleet``, one static BMC per machine (lab/machines/redfish_fleet.py: its own
port, its own session). The Ironic the inspector talks to (``ironic``):
the lab's ``real`` one, or the ``standin`` (lab/servers/ironic_standin.py), which
answers at once so the run measures the inspector and the BMCs, not one
Ironic process answering 1,000 machines' calls. Ironic's own ``redfish``
inspection (``with_ironic``) always runs in the real Ironic, on
``ironic_machines`` more machines of the same kind of BMC.

``compare``: that many more machines twice (one set whose BMC tells every
required fact, one whose BMC has no drives, so ``auto`` falls back to the
ramdisk), each set introspected in-band and then in ``auto``: the lab's
ramdisk player plays the ramdisks of the machines Ironic powers on.
"""

import concurrent.futures
import contextlib
import dataclasses
import pathlib
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import requests

from lab import procstat
from lab.bench import cpu_profile, ironic_redfish
from lab.machines import enroll, hardware
from lab.machines.hardware import Machine
from lab.machines.ramdisk import RamdiskPlayer
from lab.machines.redfish_fleet import PASSWORD as FLEET_PASSWORD
from lab.machines.redfish_fleet import USERNAME as FLEET_USERNAME
from lab.machines.redfish_fleet import BmcFleet
from lab.machines.redfish_nodes import MachineBmc, emulated, point_at, static
from lab.servers.inspector import InspectorServer
from lab.servers.ironic import IronicServer
from lab.servers.ironic_standin import StandinServer
from lab.servers.postgres import PostgresServer
from lab.servers.redfish_emulator import PASSWORD as EMULATOR_PASSWORD
from lab.servers.redfish_emulator import USERNAME as EMULATOR_USERNAME
from lab.servers.redfish_emulator import RedfishEmulator
from lab.servers.split_cluster import SplitCluster
from lab.venvs import default_cache_dir
from lab.waiting import wait_until

V126 = {"X-OpenStack-Ironic-Inspector-API-Version": "1.26"}
SEED = 33


@dataclasses.dataclass
class RedfishBenchOptions:
    machines: int = 100
    max_per_host: int = 16
    work_dir: pathlib.Path | None = None
    with_ironic: bool = False
    ironic_machines: int = 20
    bmcs: str = "emulator"
    """emulator (sushy-tools') or fleet (one static BMC per machine)."""
    ironic: str = "real"
    """The Ironic of our runs: real or standin."""
    compare: int = 0
    """Machines per set of the in-band against auto comparison (0: none)."""
    max_concurrency: int = 64
    database: str = "sqlite"
    """The inspector's database: sqlite or postgresql (a private server)."""
    """The inspector's ``[DEFAULT]max_concurrency`` (steps at once)."""
    profile_dir: pathlib.Path | None = None
    """py-spy the inspector during the out-of-band run (lab/bench/cpu_profile.py)."""
    split: int = 0
    """0: the standalone service; N: the split shape, an API and N
    conductors (JSON-RPC, etcd, the PostgreSQL database)."""


@dataclasses.dataclass
class Planned:
    """Every machine of a run and where its system is."""

    ours: list[Machine]
    suffices: list[Machine]
    lacking: list[Machine]
    theirs: list[Machine]
    bmcs: dict[str, MachineBmc] = dataclasses.field(default_factory=dict)
    """Machine name -> its BMC."""

    def every(self) -> list[Machine]:
        return self.ours + self.suffices + self.lacking + self.theirs


def plan(options: RedfishBenchOptions) -> Planned:
    sizes = [options.machines, options.compare, options.compare]
    sizes.append(options.ironic_machines if options.with_ironic else 0)
    groups: list[list[Machine]] = []
    first = 1
    for size in sizes:
        group = [hardware.make_machine(i, SEED) for i in range(first, first + size)]
        for machine in group:
            machine.enroll_port = False  # the BMC's MACs become the ports
        groups.append(group)
        first += size
    return Planned(groups[0], groups[1], groups[2], groups[3])


@contextlib.contextmanager
def _bmcs(planned: Planned, bmcs: str, work: pathlib.Path) -> Any:
    """The BMCs of every planned machine, up; the server's PID."""
    lacking = {m.name for m in planned.lacking}
    every = planned.every()
    if bmcs == "fleet":
        fleet = BmcFleet(
            work / "fleet", [static(m, m.name not in lacking) for m in every]
        )
        with fleet:
            for index, machine in enumerate(every):
                planned.bmcs[machine.name] = MachineBmc(
                    machine.name,
                    fleet.addresses[index],
                    fleet.system_id(index),
                    FLEET_USERNAME,
                    FLEET_PASSWORD,
                )
            assert fleet.pid is not None
            yield fleet.pid
        return
    systems = [emulated(m, "bench", m.name not in lacking) for m in every]
    with RedfishEmulator(work / "emulator", systems) as emulator:
        for machine, system in zip(every, systems, strict=True):
            planned.bmcs[machine.name] = MachineBmc(
                machine.name,
                emulator.url,
                emulator.system_id(system),
                EMULATOR_USERNAME,
                EMULATOR_PASSWORD,
            )
        assert emulator.pid is not None
        yield emulator.pid


def _our_ironic(options: RedfishBenchOptions, work: pathlib.Path) -> Any:
    if options.ironic == "standin":
        return StandinServer(work / "ironic-standin")
    return IronicServer(default_cache_dir(), work / "ironic")


def run(options: RedfishBenchOptions) -> dict[str, Any]:
    """One run; the measurements."""
    if options.split and options.database != "postgresql":
        raise ValueError("the split shape runs on PostgreSQL (--database postgresql)")
    work = options.work_dir or pathlib.Path(tempfile.mkdtemp(prefix="redfish-bench-"))
    planned = plan(options)
    result: dict[str, Any] = {
        "machines": options.machines,
        "bmcs": options.bmcs,
        "ironic": options.ironic,
        "max_per_host": options.max_per_host,
        "max_concurrency": options.max_concurrency,
        "database": options.database,
        "split": options.split,
        "load_average_before": _load(),
    }
    with contextlib.ExitStack() as stack:
        bmc_pid = stack.enter_context(_bmcs(planned, options.bmcs, work))
        ironic = _our_ironic(options, work)
        ironic.start()
        stack.callback(ironic.stop)
        if isinstance(ironic, IronicServer):
            ironic.set_policy({"show_password": "@"})
        api = enroll.IronicAPI(ironic.url)
        ours = planned.ours + planned.suffices + planned.lacking
        nodes = enroll.enroll(api, ours, workers=16)
        pids: dict[str, int] = {}
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            list(
                pool.map(
                    lambda m: point_at(api, nodes[m.name], planned.bmcs[m.name]), ours
                )
            )
        database_url = None
        postgres = None
        if options.database == "postgresql":
            postgres = PostgresServer(work / "postgres")
            postgres.start()
            stack.callback(postgres.stop)
            database_url = postgres.url
            # the postmaster's PID (its backends are its children)
            postmaster = postgres.data_dir / "postmaster.pid"
            pids["postgresql"] = int(postmaster.read_text().split()[0])
        inspector_options = {
            # BMCs that answer at once keep 2 cores busy with far fewer
            # steps at once than the default 1,000
            "DEFAULT": {"max_concurrency": str(options.max_concurrency)},
            "redfish": {"max_per_host": str(options.max_per_host)},
            "processing": {"store_data": "database"},
        }
        if options.split:
            cluster = SplitCluster(
                work / "cluster",
                ironic.url,
                conductors=options.split,
                postgres=postgres,
                rpc_transport="json-rpc",
                options=inspector_options,
            )
            cluster.start()
            stack.callback(cluster.stop)
            url = cluster.url
            assert cluster.api is not None and cluster.api.pid is not None
            pids["inspector-api"] = cluster.api.pid
            for conductor in cluster.conductors:
                assert conductor.pid is not None
                pids[f"inspector-{conductor.host}"] = conductor.pid
            assert cluster.etcd.pid is not None
            pids["etcd"] = cluster.etcd.pid
            inspector_pids = {
                k: v for k, v in pids.items() if k.startswith("inspector")
            }
            stop_inspector: Callable[[], object] = cluster.stop
        else:
            inspector = InspectorServer(
                work / "inspector",
                ironic.url,
                database_url=database_url,
                options=inspector_options,
            )
            inspector.start()
            stack.callback(inspector.stop)
            assert inspector.pid is not None
            url = inspector.url
            pids["inspector"] = inspector.pid
            inspector_pids = {"inspector": inspector.pid}
            stop_inspector = inspector.stop
        assert ironic.pid is not None
        pids.update(ironic=ironic.pid, bmcs=bmc_pid)
        uuids = [nodes[m.name] for m in planned.ours]
        profiler = None
        if options.profile_dir is not None:
            profiler = cpu_profile.Profiler(options.profile_dir, inspector_pids)
            profiler.start()
        result["out_of_band"] = _measure(url, pids, uuids, "out-of-band")
        if profiler is not None:
            profiler.stop()
            result["profile"] = profiler.report()
        if options.compare:
            result["compare"] = _compare(url, pids, api, planned, nodes)
        stop_inspector()
        if options.with_ironic:
            result["ironic_redfish"] = _theirs(options, work, planned, ironic)
        result["load_average_after"] = _load()
    return result


def _compare(
    url: str,
    pids: dict[str, int],
    api: enroll.IronicAPI,
    planned: Planned,
    nodes: dict[str, str],
) -> list[dict[str, Any]]:
    """Each set in-band, then the same machines in ``auto``."""
    player = RamdiskPlayer(
        api, url, planned.suffices + planned.lacking, seed=SEED, poll_interval=0.5
    )
    player.start()
    found = []
    try:
        for label, group in (
            ("the BMC suffices", planned.suffices),
            ("auto falls back", planned.lacking),
        ):
            uuids = [nodes[m.name] for m in group]
            for mode in ("in-band", "auto"):
                measured = _measure(url, pids, uuids, mode)
                found.append({"set": label, "mode": mode, **measured})
    finally:
        player.stop()
    return found


def _theirs(
    options: RedfishBenchOptions,
    work: pathlib.Path,
    planned: Planned,
    ours: Any,
) -> dict[str, Any]:
    """Ironic's own inspection, in the real Ironic (ours when it is one)."""
    bmcs = [planned.bmcs[m.name] for m in planned.theirs]
    try:
        if isinstance(ours, IronicServer):
            return ironic_redfish.inspects(enroll.IronicAPI(ours.url), ours, bmcs)
        with IronicServer(default_cache_dir(), work / "ironic-real") as real:
            return ironic_redfish.inspects(enroll.IronicAPI(real.url), real, bmcs)
    except (RuntimeError, TimeoutError, requests.RequestException) as exc:
        # our numbers stand; say why theirs are missing
        return {"error": str(exc)[:500]}


def _load() -> str:
    """The 1, 5 and 15 minute load averages (the machine is shared)."""
    return " ".join(pathlib.Path("/proc/loadavg").read_text().split()[:3])


def _measure(
    url: str, pids: dict[str, int], uuids: list[str], mode: str
) -> dict[str, Any]:
    """Start ``uuids`` in ``mode``, 16 at a time, and wait for them all."""
    before = {k: procstat.cpu_seconds(p) for k, p in pids.items()}
    started = time.monotonic()
    local = threading.local()

    def start(node: str) -> None:
        if not hasattr(local, "http"):
            local.http = requests.Session()
            local.http.headers.update(V126)
        resp = local.http.post(f"{url}/v1/introspection/{node}?mode={mode}", timeout=60)
        if resp.status_code != 202:
            raise RuntimeError(
                f"Starting {node} ({mode}): {resp.status_code} {resp.text}"
            )

    # at once, as a client starting a rack would (one at a time the API's
    # answer, not the work, sets the pace)
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(start, uuids))
    starts = time.monotonic() - started
    http = requests.Session()
    http.headers.update(V126)
    wanted = set(uuids)

    def ended() -> list[dict[str, Any]]:
        body = http.get(f"{url}/v1/introspection?limit=0", timeout=60).json()
        return [
            s for s in body["introspection"] if s["uuid"] in wanted and s["finished"]
        ]

    done = wait_until(
        ended,
        120 + 2 * len(uuids),
        f"every machine to finish ({mode})",
        until=lambda found: len(found) == len(uuids),
        # each look lists every introspection, on the inspector's CPU
        interval=0.5 if len(uuids) <= 200 else 1.0,
    )
    wall = time.monotonic() - started
    after = {k: procstat.cpu_seconds(p) for k, p in pids.items()}
    errors = [s["error"] for s in done if s["error"]]
    cpu = {k: round(after[k] - before[k], 2) for k in before}
    if "inspector" not in cpu:  # the split shape: its processes together
        parts = [v for k, v in cpu.items() if k.startswith("inspector-")]
        cpu["inspector"] = round(sum(parts), 2)
    ran: dict[str, int] = {}
    for status in done:
        ran[str(status.get("mode"))] = ran.get(str(status.get("mode")), 0) + 1
    return {
        "machines": len(uuids),
        "wall_s": round(wall, 2),
        "starts_s": round(starts, 2),
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "ran": ran,
        "cpu_s": cpu,
        "cpu_ms_per_machine": {
            k: round(1000 * v / len(uuids), 1) for k, v in cpu.items()
        },
        "load_average": _load(),
    }


def _shape(result: dict[str, Any]) -> str:
    split = result.get("split") or 0
    if not split:
        return "standalone"
    return f"split (an API and {split} conductors, JSON-RPC)"


def report(result: dict[str, Any]) -> str:
    bmcs = {
        "fleet": "one static BMC per machine (lab/machines/redfish_fleet.py)",
        "emulator": "sushy-tools' emulator, one address",
    }[result["bmcs"]]
    ironic = {"real": "the lab's real Ironic", "standin": "the Ironic stand-in"}
    ours = result["out_of_band"]
    per = ours["cpu_ms_per_machine"]
    lines = [
        f"{result['machines']} machines out of band; BMCs: {bmcs}; our Ironic: "
        f"{ironic[result['ironic']]}; the inspector "
        f"{_shape(result)} on {result['database']}; "
        f"load average before "
        f"{result['load_average_before']}",
        f"  wall {ours['wall_s']} s (starts sent in {ours['starts_s']} s), "
        f"{ours['errors']} errors, ran {ours['ran']}",
        f"  CPU ms per machine: inspector {per['inspector']}, "
        f"{result['ironic']} Ironic {per['ironic']}, BMCs {per['bmcs']}"
        + (f", PostgreSQL {per['postgresql']}" if "postgresql" in per else "")
        + (f", etcd {per['etcd']}" if "etcd" in per else "")
        + "; "
        f"load average after {ours['load_average']}",
    ]
    for row in result.get("compare") or []:
        per = row["cpu_ms_per_machine"]
        lines.append(
            f"{row['machines']} machines, {row['set']}, {row['mode']}: wall "
            f"{row['wall_s']} s, {row['errors']} errors, ran {row['ran']}; CPU ms "
            f"per machine: inspector {per['inspector']}, {result['ironic']} "
            f"Ironic {per['ironic']}, BMCs {per['bmcs']}; load {row['load_average']}"
        )
    theirs = result.get("ironic_redfish")
    if theirs and "error" in theirs:
        lines.append(f"Ironic's own redfish inspection: {theirs['error']}")
    elif theirs:
        lines.append(
            f"Ironic's own redfish inspection (the real Ironic) of "
            f"{theirs['machines']} machines: {theirs['wall_s']} s wall, "
            f"{theirs['failed']} failed; Ironic CPU "
            f"{theirs['ironic_cpu_ms_per_machine']} ms per machine"
        )
    if "profile" in result:
        lines += ["Where the inspector's CPU went (py-spy):", result["profile"]]
    lines.append(f"load average at the end {result['load_average_after']}")
    return "\n".join(lines)
