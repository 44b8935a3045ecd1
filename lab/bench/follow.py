"""Following Ironic's own inspections at scale (issue 47, ``make bench
BENCH_SCALE=follow``): the lab's real Ironic 39 (SQLite) holding
``nodes`` nodes it inspected, written straight into its database
(lab/bench/ironic_seed.py), and the standalone inspector following it
([ironic_follow], its own SQLite). In order:

1. catch-up: the follower's first poll (a whole scan) records every
   inspection, one inventory read each: the seconds until all are
   recorded, Ironic's CPU and ours;
2. polls with nothing new at poll_interval 1 s: Ironic's CPU over a window
   less its CPU over as long with no client at all (before the inspector
   starts and after it stops), per poll; a whole scan per poll
   (full_scan_interval 1) the same way;
3. bursts of ``burst`` inspections ending within ``burst_over`` seconds
   (the seed script, paced) at poll_interval ``burst_poll``: each one's
   latency from Ironic's finish to our ``recorded_at``, our CPU per run;
4. the fleet endpoints, ``rounds`` requests each: during the second burst
   (rounds spread over it) and at the end, quiet.

The inspector runs with [processing]sync_interval 0: its reconcile lists
every node of Ironic each minute by default, a cost apart from following,
priced at the end with the service's own client. Requests to Ironic are
counted from its API log. Prints numbers; fails only when an inspection
was not recorded.
"""

import contextlib
import dataclasses
import datetime
import hashlib
import json
import os
import pathlib
import random
import resource
import shutil
import sqlite3
import subprocess
import tempfile
import time
import uuid as uuidlib
from collections.abc import Callable, Iterable
from typing import Any

import requests

from lab import checkout, procstat
from lab.bench import cpu_profile, history
from lab.bench.follow_records import latencies, recorded_count, recorded_rows, spread
from lab.bench.follow_report import DEFAULT_FULL_SCAN, derive, idle_rate
from lab.bench.follow_requests import POLL, Requests, poll_timeline, polls_in
from lab.bench.stats import percentile, timed
from lab.machines import hardware
from lab.servers.inspector import InspectorServer
from lab.servers.ironic import IronicServer
from lab.venvs import default_cache_dir
from lab.waiting import wait_until

FOLLOW = {"enabled": "True", "poll_interval": "1", "full_scan_interval": "3600"}
FLEET_EPOCH = datetime.datetime(2026, 1, 1)
"""When the seeded fleet's first inspection ended (UTC)."""


@dataclasses.dataclass
class FollowOptions:
    nodes: int = 10_000
    burst: int = 500
    burst_over: float = 60.0
    burst_poll: int = 10
    window: float = 60.0
    """Seconds of each CPU window (polls, whole scans, no client)."""
    rounds: int = 100
    seed: int = 0
    timeout: float = 1800.0
    """Seconds the catch-up may take."""
    work_dir: pathlib.Path | None = None
    profile_dir: pathlib.Path | None = None
    """py-spy the inspector during the second burst (its numbers suffer)."""


# what the seed script is given


def node_uuids(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        str(uuidlib.UUID(int=rng.getrandbits(128), version=4)) for _ in range(count)
    ]


def seed_entry(machine: hardware.Machine, uuid: str) -> dict[str, Any]:
    """The machine's ramdisk payload as Ironic stores it: the inventory,
    and the rest as plugin data."""
    plugin_data = machine.payload()
    inventory = plugin_data.pop("inventory")
    return {"uuid": uuid, "inventory": inventory, "plugin_data": plugin_data}


def inspected_at(index: int) -> dict[str, str]:
    """Inspection times of node ``index`` (0-based) of the seeded fleet:
    one a second from :data:`FLEET_EPOCH` on, each 5 minutes long (fixed,
    so the same fleet is the same file, and the cached database serves)."""
    finished = FLEET_EPOCH + datetime.timedelta(seconds=index)
    started = finished - datetime.timedelta(minutes=5)
    return {"started_at": started.isoformat(), "finished_at": finished.isoformat()}


def _write_lines(path: pathlib.Path, entries: Iterable[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as out:
        for entry in entries:
            out.write(json.dumps(entry) + "\n")


def _seed_command(ironic: IronicServer, *args: str) -> list[str]:
    return [
        str(ironic.venv / "bin" / "python"),
        "-m",
        "lab.bench.ironic_seed",
        "--config-file",
        str(ironic.config_file),
        *args,
    ]


def _seed_env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(checkout.ROOT))
    env.pop("PYTHONHOME", None)
    return env


# CPU over a span


@dataclasses.dataclass
class Span:
    """CPU seconds of Ironic (and of the inspector, when it runs) and the
    requests Ironic answered, from :meth:`begin` to :meth:`end`."""

    ironic: IronicServer
    inspector: InspectorServer | None

    def begin(self) -> "Span":
        self._requests = Requests(self.ironic.log_file)
        self._started = time.monotonic()
        self._ironic0 = procstat.cpu_seconds(self._pid(self.ironic))
        self._ours0 = (
            procstat.cpu_seconds(self._pid(self.inspector)) if self.inspector else 0.0
        )
        return self

    @staticmethod
    def _pid(server: Any) -> int:
        assert server.pid is not None
        return int(server.pid)

    def end(self) -> dict[str, Any]:
        ironic = procstat.cpu_seconds(self._pid(self.ironic)) - self._ironic0
        ours = None
        if self.inspector is not None:
            ours = procstat.cpu_seconds(self._pid(self.inspector)) - self._ours0
        return {
            "seconds": round(time.monotonic() - self._started, 2),
            "ironic_cpu_s": round(ironic, 2),
            "ours_cpu_s": None if ours is None else round(ours, 2),
            "requests": dict(self._requests.counts().most_common()),
        }


def idle_window(ironic: IronicServer, seconds: float) -> dict[str, Any]:
    """Ironic with no client at all for ``seconds``."""
    span = Span(ironic, None).begin()
    time.sleep(seconds)
    return span.end()


# the fleet endpoints


def endpoint_paths(node: str) -> dict[str, str]:
    """What an operator opens (lab/bench/history.py's first requests)."""
    return {**history.COLD_PATHS, "/fleet/nodes/<uuid>": f"/fleet/nodes/{node}"}


def _session() -> requests.Session:
    http = requests.Session()
    http.trust_env = False
    return http


def _getter(http: requests.Session, url: str) -> Callable[[], None]:
    def call() -> None:
        http.get(url, timeout=60).raise_for_status()

    return call


def endpoints_quiet(base: str, paths: dict[str, str], rounds: int) -> dict[str, Any]:
    """Each path ``rounds`` times in a row, after one unmeasured request."""
    http = _session()
    results = {}
    for name, path in paths.items():
        call = _getter(http, base + path)
        call()
        results[name] = timed(call, rounds)
    return results


def endpoints_spread(
    base: str, paths: dict[str, str], rounds: int, seconds: float
) -> dict[str, Any]:
    """``rounds`` rounds of one request to each path, the rounds started
    evenly over ``seconds`` (so they meet the whole burst)."""
    http = _session()
    took: dict[str, list[float]] = {name: [] for name in paths}
    began = time.monotonic()
    for index in range(rounds):
        delay = began + index * seconds / rounds - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        for name, path in paths.items():
            started = time.perf_counter()
            _getter(http, base + path)()
            took[name].append((time.perf_counter() - started) * 1000)
    results: dict[str, Any] = {
        name: {
            "p50_ms": round(percentile(ms, 50), 2),
            "p99_ms": round(percentile(ms, 99), 2),
        }
        for name, ms in took.items()
    }
    results["seconds"] = round(time.monotonic() - began, 1)
    return results


# the phases


@dataclasses.dataclass
class Lab:
    options: FollowOptions
    work: pathlib.Path
    ironic: IronicServer
    inspector: InspectorServer
    uuids: list[str]

    @property
    def database(self) -> pathlib.Path:
        return self.inspector.work_dir / "inspector.sqlite"

    def span(self) -> Span:
        return Span(self.ironic, self.inspector).begin()


def fleet_lines(lab: Lab) -> pathlib.Path:
    """The seed script's file of every node, inspected once in the past."""
    path = lab.work / "nodes.jsonl"
    entries = (
        {
            **seed_entry(hardware.make_machine(i + 1, lab.options.seed), uuid),
            "name": f"lab-{i + 1:05d}",
            **inspected_at(i),
        }
        for i, uuid in enumerate(lab.uuids)
    )
    _write_lines(path, entries)
    return path


def fleet_template(ironic: IronicServer, lines: pathlib.Path) -> pathlib.Path:
    """Where the seeded Ironic database of this fleet is kept between runs
    (named for the file and Ironic's release: another fleet is another
    file)."""
    digest = hashlib.sha256(ironic.requirement.encode())
    digest.update(lines.read_bytes())
    name = f"{len(lines.read_text().splitlines())}-{digest.hexdigest()[:16]}.sqlite"
    return default_cache_dir() / "follow-fleet" / name


def seed_fleet(lab: Lab, lines: pathlib.Path, template: pathlib.Path) -> dict[str, Any]:
    """Every node into the running Ironic's database, then a copy of that
    database kept as ``template`` (the only one of its size kept)."""
    began = time.monotonic()
    with open(lab.work / "seed.log", "ab") as log:
        subprocess.run(
            _seed_command(lab.ironic, "nodes", str(lines)),
            stdout=log,
            stderr=subprocess.STDOUT,
            env=_seed_env(),
            check=True,
        )
    took = time.monotonic() - began
    template.parent.mkdir(parents=True, exist_ok=True)
    size = template.name.split("-", 1)[0]
    for old in template.parent.glob(f"{size}-*.sqlite"):
        old.unlink()
    partial = template.with_suffix(f".{os.getpid()}")
    source = sqlite3.connect(lab.ironic.work_dir / "ironic.sqlite")
    copy = sqlite3.connect(partial)
    try:
        source.backup(copy)  # consistent while Ironic runs
    finally:
        copy.close()
        source.close()
    partial.replace(template)
    return {"nodes": len(lab.uuids), "seconds": round(took, 1), "cached": False}


def catch_up(lab: Lab) -> dict[str, Any]:
    """The inspector's first start: every inspection recorded."""
    began = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    span = Span(lab.ironic, None).begin()
    lab.inspector.start()
    wanted = len(lab.uuids)
    printed = time.monotonic()

    def progress() -> int:
        nonlocal printed
        count = recorded_count(lab.database)
        if time.monotonic() - printed >= 30:
            printed = time.monotonic()
            print(f"  catch-up: {count} of {wanted} recorded", flush=True)
        return count

    wait_until(
        progress,
        lab.options.timeout,
        f"all {wanted} inspections recorded",
        until=lambda count: count >= wanted,
        interval=2.0,
    )
    result = span.end()
    # the process's whole CPU, its start (a second or two) included
    ours = procstat.cpu_seconds(Span._pid(lab.inspector))
    rows = recorded_rows(lab.database)
    last = max(row[1] for row in rows.values())
    result.update(
        recorded=len(rows),
        seconds_to_all=round((last - began).total_seconds(), 1),
        ours_cpu_s=round(ours, 1),
        ours_cpu_ms_per_run=round(ours / wanted * 1000, 2),
        ironic_cpu_ms_per_run=round(result["ironic_cpu_s"] / wanted * 1000, 2),
    )
    return result


def window(lab: Lab) -> dict[str, Any]:
    span = lab.span()
    time.sleep(lab.options.window)
    return span.end()


def whole_scans(lab: Lab) -> dict[str, Any]:
    """A whole scan at every poll (full_scan_interval 1) for a window."""
    lab.inspector.reload({"ironic_follow": {"full_scan_interval": "1"}})
    found = window(lab)
    log = Requests(lab.ironic.log_file)
    lab.inspector.reload(
        {"ironic_follow": {"full_scan_interval": str(DEFAULT_FULL_SCAN)}}
    )
    # the scan under way ends first: the next window holds polls only
    wait_until(
        lambda: log.counts().get(POLL, 0),
        120,
        "a poll after the last whole scan",
        interval=0.5,
    )
    return found


def burst(lab: Lab, first: int, with_endpoints: bool) -> dict[str, Any]:
    """``burst`` nodes from index ``first`` inspected again (a disk and
    some memory replaced), their ends paced over ``burst_over`` seconds;
    each one's latency to our record. ``with_endpoints``: the fleet
    endpoints timed meanwhile."""
    options = lab.options
    chosen = range(first, first + options.burst)
    path = lab.work / f"burst-{first}.jsonl"
    result_file = lab.work / f"burst-{first}.result"
    entries = []
    for index in chosen:
        machine = hardware.make_machine(index + 1, options.seed)
        hardware.repair(machine)
        entries.append(seed_entry(machine, lab.uuids[index]))
    _write_lines(path, entries)
    wanted = {lab.uuids[i] for i in chosen}
    requests_log = Requests(lab.ironic.log_file)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    span = lab.span()
    began = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    with open(lab.work / "seed.log", "ab") as log:
        proc = subprocess.Popen(
            _seed_command(
                lab.ironic,
                "inspect",
                str(path),
                "--over",
                str(options.burst_over),
                "--result",
                str(result_file),
            ),
            stdout=log,
            stderr=subprocess.STDOUT,
            env=_seed_env(),
        )
    endpoints = None
    profiler = None
    if with_endpoints and options.profile_dir is not None:
        profiler = cpu_profile.Profiler(
            options.profile_dir, {"inspector": Span._pid(lab.inspector)}
        )
        profiler.start()
    try:
        if with_endpoints:
            endpoints = endpoints_spread(
                lab.inspector.url,
                endpoint_paths(sorted(lab.uuids)[len(lab.uuids) // 2]),
                options.rounds,
                options.burst_over + options.burst_poll,
            )

        # on a loaded machine the seed script itself may take longer than
        # burst_over: the records are waited for from its end
        wait_until(
            proc.poll,
            5 * options.burst_over + 60,
            "the seed script to write the burst",
            until=lambda code: code is not None,
            interval=1.0,
        )
        wait_until(
            lambda: recorded_count(lab.database, since=began),
            4 * options.burst_poll + 60,
            f"the burst's {len(wanted)} inspections recorded",
            until=lambda count: count >= len(wanted),
            interval=1.0,
        )
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait()
        if profiler is not None:
            profiler.stop()
    found = span.end()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # the seed script's CPU: Ironic's own work of inspecting, in its stead
    found["seed_cpu_s"] = round(
        after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime, 1
    )
    found["timeline"] = poll_timeline(polls_in(requests_log.text()))
    if profiler is not None:
        found["profile"] = profiler.report()
    written = {}
    for line in result_file.read_text().splitlines():
        entry = json.loads(line)
        written[entry["uuid"]] = datetime.datetime.fromisoformat(entry["finished_at"])
    took, missing = latencies(written, recorded_rows(lab.database))
    ends = sorted(written.values())
    found.update(
        inspections=len(wanted),
        written=len(written),
        ends_over_s=round((ends[-1] - ends[0]).total_seconds(), 1) if ends else None,
        recorded=len(took),
        not_recorded=missing,
        latency_s=spread(took),
        within_two_polls=sum(1 for t in took if t <= 2 * options.burst_poll),
        ours_cpu_ms_per_run=round(found["ours_cpu_s"] / max(1, len(took)) * 1000, 2),
        ironic_cpu_ms_per_run=round(
            found["ironic_cpu_s"] / max(1, len(took)) * 1000, 2
        ),
    )
    if endpoints is not None:
        found["endpoints"] = endpoints
    path.unlink()
    return found


def ironic_listings(lab: Lab, rate: float, times: int = 3) -> dict[str, Any]:
    """Ironic's CPU for one whole listing with the service's own client:
    the follower's whole scan and the reconcile's node list (no
    inspector running), less Ironic's CPU with no client."""
    from oslo_config import cfg

    from inspector.baremetal.client import BaremetalClient
    from inspector.conf import opts

    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    conf([])
    conf.set_override("auth_type", "none", group="ironic")
    conf.set_override("endpoint_override", lab.ironic.url, group="ironic")
    client = BaremetalClient(conf)

    def scan() -> int:
        nodes, marker = [], None
        while True:
            page = client.inspected_page(1000, marker, by_finish=False)
            nodes += page
            if len(page) < 1000:
                return len(nodes)
            marker = page[-1]["uuid"]

    found: dict[str, Any] = {}
    for name, call in (
        ("follower's whole scan", scan),
        ("reconcile's node list", lambda: len(client.list_node_uuids())),
    ):
        costs = []
        for _ in range(times):
            span = Span(lab.ironic, None).begin()
            count = call()
            cost = span.end()
            costs.append(cost["ironic_cpu_s"] - rate * cost["seconds"])
        found[name] = {
            "nodes": count,
            "ironic_cpu_s": [round(c, 2) for c in costs],
        }
    return found


def run(options: FollowOptions) -> dict[str, Any]:
    work = options.work_dir or pathlib.Path(tempfile.mkdtemp(prefix="follow-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {
        "options": {
            k: v
            for k, v in dataclasses.asdict(options).items()
            if k not in ("work_dir", "profile_dir")
        },
        "load_average": [round(os.getloadavg()[0], 1)],
    }
    ok = False
    with contextlib.ExitStack() as stack:
        ironic = IronicServer(default_cache_dir(), work / "ironic")
        inspector = InspectorServer(
            work / "inspector",
            ironic.url,
            options={
                "ironic_follow": dict(FOLLOW),
                # the reconcile's listing is priced apart (ironic_listings)
                "processing": {"sync_interval": "0"},
            },
        )
        lab = Lab(
            options, work, ironic, inspector, node_uuids(options.nodes, options.seed)
        )
        lines = fleet_lines(lab)
        template = fleet_template(ironic, lines)
        cached = template.exists()
        if cached:
            # Ironic takes the database it finds (lab/servers/ironic.py)
            ironic.work_dir.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(template, ironic.work_dir / "ironic.sqlite")
        ironic.start()
        stack.callback(ironic.stop)
        stack.callback(inspector.stop)  # first
        if cached:
            result["seed"] = {"nodes": options.nodes, "cached": True}
        else:
            print(
                f"Seeding {options.nodes} inspected nodes into Ironic ...", flush=True
            )
            result["seed"] = seed_fleet(lab, lines, template)
        lines.unlink()
        print(f"  {result['seed']}; Ironic with no client ...", flush=True)
        idle = [idle_window(ironic, options.window)]
        print("Catch-up: the inspector's first start ...", flush=True)
        result["catch_up"] = catch_up(lab)
        print(f"  {_brief(result['catch_up'])}", flush=True)
        print("Polls with nothing new, whole scans ...", flush=True)
        polls = [window(lab)]
        result["whole_scans_window"] = whole_scans(lab)
        polls.append(window(lab))
        result["poll_windows"] = polls
        inspector.reload({"ironic_follow": {"poll_interval": str(options.burst_poll)}})
        print(f"Burst of {options.burst} ...", flush=True)
        result["burst"] = burst(lab, 0, with_endpoints=False)
        print(f"  {_brief(result['burst'])}", flush=True)
        print(
            f"Burst of {options.burst} with the fleet endpoints timed ...", flush=True
        )
        second = options.burst
        result["burst_with_endpoints"] = burst(lab, second, with_endpoints=True)
        print(f"  {_brief(result['burst_with_endpoints'])}", flush=True)
        result["endpoints_quiet"] = endpoints_quiet(
            inspector.url,
            endpoint_paths(sorted(lab.uuids)[len(lab.uuids) // 2]),
            options.rounds,
        )
        result["ours_peak_rss_mib"] = round(procstat.peak_rss_mb(Span._pid(inspector)))
        inspector.stop()
        print("Ironic with no client again, its listings ...", flush=True)
        idle.append(idle_window(ironic, options.window))
        result["idle_windows"] = idle
        rate = idle_rate(idle)
        result["ironic_listings"] = ironic_listings(lab, rate)
        result["derived"] = derive(result, rate)
        result["load_average"].append(round(os.getloadavg()[0], 1))
        ok = not (
            result["burst"]["not_recorded"]
            or result["burst_with_endpoints"]["not_recorded"]
        )
    result["ok"] = ok
    if ok and options.work_dir is None:
        shutil.rmtree(work, ignore_errors=True)
    else:
        result["work_dir"] = str(work)
    return result


def _brief(phase: dict[str, Any]) -> str:
    keys = ("recorded", "seconds_to_all", "latency_s", "ours_cpu_ms_per_run")
    return ", ".join(f"{k} {phase[k]}" for k in keys if k in phase)
