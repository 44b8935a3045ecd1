"""The out-of-band demo (``python -m lab demo --oob``): the standalone
demo's shape, but every machine is also a Redfish system of the lab's
emulator (lab/servers/redfish_emulator.py) and is introspected over Redfish: most
with ``mode=out-of-band``, a couple with ``mode=auto`` whose emulated
system has no drives, so they fall back to the ramdisk, which the lab's
ramdisk player plays as in the in-band demo (in_band.py).

It prints, per machine, the mode asked and the mode it ran in, how long it
took and, for a fallback, the facts the BMC lacked; then the power and
boot-device calls Ironic logged for the out-of-band machines (there must be
none), the wall time for all machines and the inspector's CPU per machine.
"""

import concurrent.futures
import contextlib
import dataclasses
import pathlib
import shutil
import time
from collections import Counter
from typing import Any

import requests

from lab import procstat
from lab.demos import stage
from lab.demos.progress import follow
from lab.demos.stage import DemoOptions
from lab.demos.tables import hardware_cells, table
from lab.introspections import states
from lab.machines import hardware, redfish_nodes
from lab.machines.enroll import IronicAPI, enroll
from lab.machines.hardware import Machine
from lab.machines.ramdisk import RamdiskPlayer
from lab.servers import shapes
from lab.servers.ironic_log import AccessLog
from lab.servers.redfish_emulator import (
    PASSWORD,
    USERNAME,
    EmulatedMachine,
    RedfishEmulator,
)

V126_VERSION = "1.26"
V126 = {"X-OpenStack-Ironic-Inspector-API-Version": V126_VERSION}
BOOTING = ("/states/power", "/management/boot_device")
"""Ironic's endpoints that power a machine or change its boot device."""


@dataclasses.dataclass
class Planned:
    """One lab machine, its emulated BMC system and the mode it is started in."""

    machine: Machine
    system: EmulatedMachine
    mode: str


def plan(count: int, seed: int = 0, first: int = 1) -> list[Planned]:
    """``count`` lab machines (indexes from ``first``), each with an emulated
    system of its own size (CPUs, memory, its smallest disk, its NICs'
    MACs); the last ``min(2, count // 3)`` are started ``auto`` and their
    systems have no drive, so the BMC's answer lacks ``local_gb`` and the
    ramdisk is booted."""
    lab = [hardware.make_machine(i, seed) for i in range(first, first + count)]
    fallbacks = min(2, count // 3)
    found = []
    for index, machine in enumerate(lab):
        machine.enroll_port = False  # the BMC's MACs become the ports
        auto = index >= count - fallbacks
        system = redfish_nodes.emulated(machine, "oob-demo", with_disk=not auto)
        found.append(Planned(machine, system, "auto" if auto else "out-of-band"))
    return found


def point_at(api: IronicAPI, node: str, address: str, system_id: str) -> None:
    """The node's Redfish driver_info: the emulator's system ``system_id``."""
    bmc = redfish_nodes.MachineBmc(node, address, system_id, USERNAME, PASSWORD)
    redfish_nodes.point_at(api, node, bmc)


@dataclasses.dataclass
class OobDemoOutcome:
    """What one run of the planned machines came to."""

    rows: list[list[str]]
    statuses: dict[str, dict[str, Any]]
    """Node UUID -> its introspection status (API 1.26: with ``mode``)."""
    data: dict[str, dict[str, Any]]
    """Node UUID -> its stored data (finished machines)."""
    booting: dict[str, int]
    """Node UUID -> power and boot-device calls Ironic logged for it."""
    wall: float
    cpu: dict[str, float]
    finished: int
    ramdisk_posts: list[str]
    """The machines whose ramdisk the player played (posted for)."""


def _start(url: str, node: str, mode: str) -> None:
    resp = requests.post(
        f"{url}/v1/introspection/{node}?mode={mode}", headers=V126, timeout=60
    )
    if resp.status_code != 202:
        raise RuntimeError(
            f"Starting {mode} introspection of {node} failed: "
            f"{resp.status_code} {resp.text}"
        )


def _row(
    planned: Planned,
    status: dict[str, Any],
    data: dict[str, Any] | None,
    seconds: float | None,
) -> list[str]:
    cpus, memory, root, nics = hardware_cells(data)
    lacking = "-"
    if data:
        lacking = ", ".join((data.get("redfish") or {}).get("lacking") or []) or "-"
    return [
        planned.machine.name,
        planned.mode,
        status.get("mode") or "?",
        cpus,
        memory,
        root,
        nics,
        status.get("state", "?"),
        f"{seconds:.1f}" if seconds else "-",
        lacking,
    ]


HEADER = [
    "machine",
    "asked",
    "ran",
    "CPUs",
    "memory",
    "root disk",
    "NICs",
    "state",
    "seconds",
    "lacking (fallback)",
]


def introspect(
    url: str,
    api: IronicAPI,
    ironic_log: pathlib.Path,
    planned: list[Planned],
    uuids: dict[str, str],
    cpu_pids: dict[str, int],
    timeout: float,
    player: RamdiskPlayer,
) -> OobDemoOutcome:
    """Start every planned machine in its mode, 8 at a time, and wait for
    all to end; ``player`` (started, watching the planned machines) plays
    the ramdisks of those Ironic powers on. What came of it."""
    access = AccessLog(ironic_log)
    cpu_before = {n: procstat.cpu_seconds(p) for n, p in cpu_pids.items()}
    started = time.monotonic()

    def start(item: Planned) -> tuple[str, float]:
        node = uuids[item.machine.name]
        _start(url, node, item.mode)
        return node, time.monotonic()

    # several at a time, like an operator's script (the demo's 8)
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        start_times = dict(pool.map(start, planned))

    def ours() -> dict[str, dict[str, Any]]:
        found = states(url, V126_VERSION)  # with each run's mode
        return {u: s for u, s in found.items() if u in start_times}

    statuses, finished_at = follow(ours, len(planned), timeout)
    wall = (max(finished_at.values()) if finished_at else time.monotonic()) - started
    cpu = {n: procstat.cpu_seconds(p) - cpu_before[n] for n, p in cpu_pids.items()}
    posted = sorted({c.machine for c in player.callbacks})
    per_node = access.per_node(start_times)
    booting = {
        node: sum(
            n
            for call, n in calls.items()
            if call.startswith("PUT") and call.endswith(BOOTING)
        )
        for node, calls in per_node.items()
    }
    http = requests.Session()
    rows, data = [], {}
    for item in planned:
        node = uuids[item.machine.name]
        resp = http.get(f"{url}/v1/introspection/{node}/data", timeout=30)
        if resp.status_code == 200:
            data[node] = resp.json()
        ended = finished_at.get(node)
        rows.append(
            _row(
                item,
                statuses.get(node, {}),
                data.get(node),
                ended - start_times[node] if ended else None,
            )
        )
    return OobDemoOutcome(
        rows, statuses, data, booting, wall, cpu, len(finished_at), posted
    )


def problems(
    planned: list[Planned], uuids: dict[str, str], out: OobDemoOutcome
) -> list[str]:
    """What went wrong: errors, machines not finished, an out-of-band
    machine powered or booted, a fallback that did not fall back."""
    found = []
    for item in planned:
        name, node = item.machine.name, uuids[item.machine.name]
        status = out.statuses.get(node, {})
        if status.get("error"):
            found.append(f"{name}: {status['error']}")
        elif not status.get("finished"):
            found.append(f"{name}: not finished ({status.get('state', '?')})")
        if item.mode == "out-of-band" and out.booting.get(node):
            found.append(
                f"{name}: {out.booting[node]} power/boot-device calls in "
                "Ironic's access log for an out-of-band run"
            )
        if item.mode == "auto" and status.get("mode") != "in-band":
            found.append(f"{name}: auto did not fall back to the ramdisk")
    return found


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def report(planned: list[Planned], uuids: dict[str, str], out: OobDemoOutcome) -> str:
    oob = [uuids[p.machine.name] for p in planned if p.mode == "out-of-band"]
    auto = [uuids[p.machine.name] for p in planned if p.mode == "auto"]
    powered = sum(out.booting.get(n, 0) for n in oob)
    lines = [
        "",
        table(out.rows, HEADER),
        "",
        f"Out-of-band machines powered on or booted: "
        f"{'none' if powered == 0 else powered} ({powered} power/boot-device "
        f"calls for {_count(len(oob), 'node')} in Ironic's access log)",
    ]
    if auto:
        lines.append(
            f"auto fallbacks: {sum(out.booting.get(n, 0) for n in auto)} "
            f"power/boot-device calls for {_count(len(auto), 'node')} (their ramdisk "
            f"boot); ramdisks played: {', '.join(out.ramdisk_posts) or 'none'}"
        )
    for mode in ("out-of-band", "auto"):
        took = [
            float(row[8])
            for p, row in zip(planned, out.rows, strict=True)
            if p.mode == mode and row[8] != "-"
        ]
        if took:
            span = (
                f"{min(took):.1f}-{max(took):.1f}"
                if len(took) > 1
                else f"{took[0]:.1f}"
            )
            lines.append(
                f"{mode}: {_count(len(took), 'machine')} finished in {span} s "
                "from its start"
            )
    count = len(planned)
    ours = out.cpu.get("inspector", 0.0)
    lines += [
        "CPU seconds during introspection: "
        + ", ".join(f"{name} {seconds:.1f}" for name, seconds in out.cpu.items())
        + f"; the inspector's per machine {1000 * ours / count:.0f} ms",
        f"{out.finished}/{count} finished in {out.wall:.1f} s wall "
        "(the first start to the last finish)",
    ]
    return "\n".join(lines)


def run(options: DemoOptions) -> int:
    """The standalone demo's servers, the emulator, the machines over Redfish."""
    total_started = time.monotonic()
    work, timeout = stage.prepare(options, "inspector-oob-")
    with contextlib.ExitStack() as stack:
        ironic = stage.start_ironic(work, stack)
        # the inspector reads the BMC password from Ironic (doc/redfish.md);
        # the lab's Ironic has no authentication: shown to every caller
        ironic.set_policy({"show_password": "@"})

        started = time.monotonic()
        running = shapes.start(options.shape, work, ironic.url, stack)
        stage.phase(f"inspector (standalone) up at {running.url}", started)

        started = time.monotonic()
        planned = plan(options.machines, options.seed)
        emulator = RedfishEmulator(work / "redfish", [p.system for p in planned])
        emulator.start()
        stack.callback(emulator.stop)
        stage.phase(f"Redfish emulator up at {emulator.url}", started)

        started = time.monotonic()
        api = IronicAPI(ironic.url)
        uuids = enroll(api, [p.machine for p in planned])
        for item in planned:
            point_at(
                api,
                uuids[item.machine.name],
                emulator.url,
                emulator.system_id(item.system),
            )
        modes = Counter(p.mode for p in planned)
        stage.phase(
            f"{len(planned)} machines enrolled with Redfish driver_info "
            f"({modes['out-of-band']} out-of-band, {modes['auto']} auto)",
            started,
        )

        started = time.monotonic()
        assert ironic.pid is not None and emulator.pid is not None
        watched = {
            "Ironic": ironic.pid,
            **running.cpu_pids,
            "emulator": emulator.pid,
        }
        # a 0.5 s watch keeps the player's node listing off Ironic's CPU;
        # it plays on with --keep-running (an in-band start finishes)
        player = RamdiskPlayer(
            api,
            running.url,
            [p.machine for p in planned],
            seed=options.seed,
            poll_interval=0.5,
        )
        player.start()
        stack.callback(player.stop)
        out = introspect(
            running.url,
            api,
            ironic.log_file,
            planned,
            uuids,
            watched,
            timeout,
            player,
        )
        stage.phase("introspection of every machine", started)
        print(report(planned, uuids, out))
        print(f"whole demo {time.monotonic() - total_started:.1f} s")
        found = problems(planned, uuids, out)
        if options.keep_running:
            print(
                f"\nRedfish emulator: {emulator.url} (log "
                f"{emulator.log_file}); out of band (API 1.26):\n  curl -X POST "
                "-H 'X-OpenStack-Ironic-Inspector-API-Version: 1.26' "
                f"'{running.url}/v1/introspection/{planned[0].machine.name}"
                "?mode=out-of-band'"
            )
            stage.keep_running(running, work, ironic)
        for problem in found:
            print(f"ERROR {problem}")
        if found:
            print(f"Logs in {work}")
            return 1
    if options.work_dir is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0
