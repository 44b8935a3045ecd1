"""The follow demo (``python -m lab demo --follow``): Ironic inspects by
itself, as Ironic 33 and later do (inspect interface ``agent``, the lab
posting each machine's ramdisk data to Ironic), and the inspector, never
called, records every inspection in the hardware history by following
Ironic ([ironic_follow]); then two machines repaired and inspected again
by Ironic, their changes read from the inspector, and the fleet page."""

import concurrent.futures
import contextlib
import shutil
import time
from typing import Any

import requests

from lab import procstat
from lab.demos import drift, stage
from lab.demos.stage import DemoOptions
from lab.demos.tables import table
from lab.machines import hardware, ironic_agent
from lab.machines.enroll import IronicAPI, enroll
from lab.machines.hardware import Machine
from lab.servers import shapes
from lab.waiting import NotInTime, wait_until

POLL_INTERVAL = 2
"""The demo's [ironic_follow]poll_interval (the default is 60 s)."""
OPTIONS = {
    "ironic_follow": {
        "enabled": "True",
        "poll_interval": str(POLL_INTERVAL),
        "full_scan_interval": "0",
    }
}


def _inspect_all(api: IronicAPI, lab: list[Machine], uuids: dict[str, str]) -> None:
    """Ironic inspects every machine, eight at a time."""
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        done = pool.map(
            lambda m: ironic_agent.inspect(api, uuids[m.name], m.payload()), lab
        )
        list(done)


def _histories(http: requests.Session, url: str, uuids: list[str]) -> dict[str, Any]:
    found = {}
    for uuid in uuids:
        resp = http.get(f"{url}/v1/introspection/{uuid}/history", timeout=30)
        found[uuid] = resp.json()["history"] if resp.status_code == 200 else []
    return found


def _recorded(
    http: requests.Session, url: str, uuids: list[str], runs: int, timeout: float
) -> dict[str, Any]:
    """Every node's history once each holds ``runs`` runs."""
    try:
        return wait_until(
            lambda: _histories(http, url, uuids),
            timeout,
            f"{runs} runs of every node",
            until=lambda found: all(len(h) >= runs for h in found.values()),
            interval=0.5,
        )
    except NotInTime:
        return _histories(http, url, uuids)


def _rows(
    lab: list[Machine],
    uuids: dict[str, str],
    histories: dict[str, Any],
    facts: dict[str, Any],
) -> list[list[str]]:
    rows = []
    for machine in lab:
        uuid = uuids[machine.name]
        runs = histories.get(uuid) or []
        fact = facts.get(uuid, {})
        newest = runs[0] if runs else {}
        rows.append(
            [
                machine.name,
                str(fact.get("cpus", "-")),
                f"{(fact.get('memory_mb') or 0) // 1024} GiB",
                f"{(fact.get('local_gb') or 0)} GB",
                str(fact.get("product", "-")),
                f"{newest.get('source', '-')} ({newest.get('interface') or '-'})",
                str(len(runs)),
            ]
        )
    return rows


def _facts(http: requests.Session, url: str) -> dict[str, Any]:
    resp = http.get(f"{url}/v1/inventory?limit=1000", timeout=30)
    return {n["uuid"]: n for n in resp.json()["nodes"]} if resp.ok else {}


def _changes(http: requests.Session, url: str, machine: Machine, uuid: str) -> set[str]:
    """Print the newest run's changes of ``machine``; their components."""
    changes = http.get(f"{url}/v1/introspection/{uuid}/changes", timeout=30).json()[
        "changes"
    ]
    latest = [c for c in changes if c["run"] == changes[0]["run"]] if changes else []
    for change in latest:
        field = f".{change['field']}" if change["field"] else ""
        before, after = change["before"], change["after"]
        if isinstance(before, dict) or isinstance(after, dict):
            before = (before or {}).get("serial", "-")
            after = (after or {}).get("serial", "-")
        print(
            f"  {machine.name}  {change['kind']:<8} {change['component']}{field}"
            f"  {before} -> {after}"
        )
    return {c["component"] for c in latest}


def run(options: DemoOptions) -> int:
    total_started = time.monotonic()
    work, timeout = stage.prepare(options, "inspector-follow-demo-")
    with contextlib.ExitStack() as stack:
        ironic = stage.start_ironic(work, stack)
        started = time.monotonic()
        running = shapes.start(options.shape, work, ironic.url, stack, OPTIONS)
        url = running.url
        stage.phase(f"inspector (following Ironic) up at {url}", started)

        started = time.monotonic()
        lab = hardware.make_lab(options.machines, options.seed)
        api = IronicAPI(ironic.url)
        uuids = enroll(api, lab)
        stage.phase(f"{len(lab)} machines enrolled (manageable)", started)

        assert ironic.pid is not None
        watched = {"Ironic": ironic.pid, **running.cpu_pids}
        cpu_before = {name: procstat.cpu_seconds(pid) for name, pid in watched.items()}
        started = time.monotonic()
        _inspect_all(api, lab, uuids)
        stage.phase("Ironic's own inspection of every machine", started)
        started = time.monotonic()
        http = requests.Session()
        nodes = [uuids[m.name] for m in lab]
        histories = _recorded(http, url, nodes, 1, timeout)
        missing = [u for u, h in histories.items() if not h]
        stage.phase("every inspection in the inspector's history", started)
        cpu = {
            name: procstat.cpu_seconds(pid) - cpu_before[name]
            for name, pid in watched.items()
        }
        print(
            "\nEach machine as the inspector recorded Ironic's inspection "
            "(GET /v1/inventory, .../history):\n"
        )
        print(
            table(
                _rows(lab, uuids, histories, _facts(http, url)),
                ["machine", "CPUs", "memory", "disks", "product", "source", "runs"],
            )
        )

        repaired = lab[:2]
        started = time.monotonic()
        for machine in repaired:
            hardware.repair(machine)
        _inspect_all(api, repaired, uuids)
        again = _recorded(http, url, [uuids[m.name] for m in repaired], 2, timeout)
        print(
            "\nA disk swapped and a quarter of the memory gone in "
            + " and ".join(m.name for m in repaired)
            + f"; Ironic inspected them again and the inspector recorded it in "
            f"{time.monotonic() - started:.1f} s. Their changes "
            "(GET .../changes):"
        )
        drifted = all(len(h) >= 2 for h in again.values())
        for machine in repaired:
            components = _changes(http, url, machine, uuids[machine.name])
            drifted = drifted and "memory" in components
        drifted = drift.save_fleet_page(url, repaired, uuids) and drifted
        metrics = http.get(f"{url}/metrics", timeout=30).text
        follow_lines = [
            line
            for line in metrics.splitlines()
            if line.startswith("ironic_inspector_ironic_follow_")
            or line.startswith("ironic_inspector_follow_runs_total")
        ]
        print("\nThe follower in /metrics:\n  " + "\n  ".join(follow_lines))
        print(
            "\nCPU seconds while Ironic inspected and the inspector followed: "
            + ", ".join(f"{name} {seconds:.1f}" for name, seconds in cpu.items())
            + f"; whole demo {time.monotonic() - total_started:.1f} s"
        )
        if options.keep_running:
            stage.keep_running(running, work, ironic)
        if missing:
            print(f"Not recorded within {timeout:.0f} s: {', '.join(missing)}")
            return 1
        if not drifted:
            print("The repaired machines' changes were not as expected")
            return 1
    if options.work_dir is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0
