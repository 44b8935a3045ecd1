"""The demo (``python -m lab demo``): a real Ironic, the inspector in the
shape asked (standalone, or split with ``--split N``), N machines enrolled,
introspected through the public API and their ramdisks played; what was
found, then two machines repaired and introspected again (drift.py)."""

import contextlib
import json
import shutil
import threading
import time
from collections import Counter
from typing import Any

import requests

from lab import procstat
from lab.demos import drift, stage
from lab.demos.progress import follow
from lab.demos.stage import DemoOptions
from lab.demos.tables import hardware_cells, table
from lab.introspections import start_all, states
from lab.machines import hardware, lldp
from lab.machines.dhcp import DhcpSegment
from lab.machines.enroll import IronicAPI, enroll
from lab.machines.hardware import Machine
from lab.machines.ramdisk import RamdiskPlayer
from lab.servers import shapes


def _pxe_options(segment: DhcpSegment) -> dict[str, dict[str, str]]:
    """The standalone process's PXE filter on the segment's first dnsmasq."""
    server = segment.servers[0]
    return {
        "pxe_filter": {"driver": "dnsmasq", "sync_period": "5"},
        "dnsmasq_pxe_filter": {
            "dhcp_hostsdir": str(server.hostsdir),
            "dnsmasq_start_command": server.start_command(),
            "dnsmasq_stop_command": server.stop_command(),
        },
    }


def _dhcp_probe(segment: DhcpSegment) -> Any:
    """One machine at a time takes the client namespace's MAC and asks."""
    guard = threading.Lock()

    def probe(machine: Any) -> str | None:
        with guard:
            return segment.offered(machine.pxe_mac)

    return probe


def _pxe_summary(segment: DhcpSegment, player: Any, lab: list[Any], url: str) -> None:
    leases = dict(player.leases)
    got = sorted(a for a in leases.values() if a)
    print(
        f"\nPXE: {len(got)} of {len(lab)} machines got an address from the "
        f"filtered dnsmasq before their ramdisk posted"
        + (f" ({got[0]} ... {got[-1]})" if got else "")
    )
    # every introspection is over: known machines are denied again
    refused = [m.name for m in lab[:3] if segment.offered(m.pxe_mac) is None]
    print(
        f"PXE: after the introspections, {len(refused)} of {min(3, len(lab))} "
        "machines probed get no offer (denied again)"
    )
    resp = requests.get(
        f"{url}/v1/pxe-filters",
        headers={"X-OpenStack-Ironic-Inspector-API-Version": "1.21"},
        timeout=30,
    )
    for view in resp.json().get("pxe_filters", []):
        print(
            f"PXE filter {view['host']}: healthy {view['healthy']}, "
            f"{view['allowed']} allowed, {view['denied']} denied, unknown MACs "
            f"{'allowed' if view['unknown_allowed'] else 'denied'}, "
            f"{view['generation']} writes"
        )


def _row(
    machine: Machine,
    uuid: str,
    status: dict[str, Any],
    data: dict[str, Any] | None,
    seconds: float | None,
) -> list[str]:
    cpus, memory, root, nics = hardware_cells(data)
    switch = gpus = "-"
    if data:
        ports = []
        for iface in data["inventory"]["interfaces"]:
            info = lldp.decode(iface.get("lldp"))
            if info.get("switch_system_name"):
                ports.append(f"{info['switch_system_name']}:{info['switch_port_id']}")
        switch = ", ".join(ports) or "-"
        gpu_count = Counter(
            d.get("vendor_id")
            for d in data.get("pci_devices") or []
            if d.get("class", "").startswith("03")
        )
        gpus = ", ".join(f"{n}x {v}" for v, n in gpu_count.items()) or "-"
    return [
        machine.name,
        cpus,
        memory,
        root,
        nics,
        switch,
        gpus,
        status.get("state", "?"),
        f"{seconds:.1f}" if seconds else "-",
    ]


def run(options: DemoOptions) -> int:
    total_started = time.monotonic()
    work, timeout = stage.prepare(options, "inspector-demo-")
    with contextlib.ExitStack() as stack:
        ironic = stage.start_ironic(work, stack)

        started = time.monotonic()
        segment = None
        extra = None
        if options.pxe:  # standalone only (the command line refuses split)
            segment = DhcpSegment(work / "dhcp")
            stack.callback(segment.close)
            segment.start()
            extra = _pxe_options(segment)
        running = shapes.start(options.shape, work, ironic.url, stack, extra)
        url = running.url
        described = options.shape.describe()
        if segment is not None:
            described += ", PXE from a filtered dnsmasq"
        stage.phase(f"inspector ({described}) up at {url}", started)

        started = time.monotonic()
        lab = hardware.make_lab(options.machines, options.seed)
        api = IronicAPI(ironic.url)
        uuids = enroll(api, lab)
        stage.phase(f"{len(lab)} machines enrolled (manageable)", started)

        # a 0.5 s watch keeps the player's own node listing off Ironic's CPU
        probe = _dhcp_probe(segment) if segment is not None else None
        player = RamdiskPlayer(
            api, url, lab, seed=options.seed, poll_interval=0.5, dhcp=probe
        )
        player.start()
        stack.callback(player.stop)

        started = time.monotonic()
        assert ironic.pid is not None
        watched = {"Ironic": ironic.pid, **running.cpu_pids}
        cpu_before = {name: procstat.cpu_seconds(pid) for name, pid in watched.items()}
        http = requests.Session()
        start_times = start_all(url, [uuids[m.name] for m in lab])
        statuses, finished_at = follow(lambda: states(url), len(lab), timeout)
        elapsed = time.monotonic() - started
        stage.phase("introspection of every machine", started)
        cpu = {
            name: procstat.cpu_seconds(pid) - cpu_before[name]
            for name, pid in watched.items()
        }
        rss = {
            name: procstat.peak_rss_mb(pid) for name, pid in running.rss_pids.items()
        }

        rows = []
        for machine in lab:
            uuid = uuids[machine.name]
            data = None
            resp = http.get(f"{url}/v1/introspection/{uuid}/data", timeout=30)
            if resp.status_code == 200:
                data = resp.json()
            took = finished_at.get(uuid)
            rows.append(
                _row(
                    machine,
                    uuid,
                    statuses.get(uuid, {}),
                    data,
                    took - start_times[uuid] if took else None,
                )
            )
        print()
        print(
            table(
                rows,
                [
                    "machine",
                    "CPUs",
                    "memory",
                    "root disk",
                    "NICs",
                    "switch ports",
                    "GPUs",
                    "state",
                    "seconds",
                ],
            )
        )
        shown = lab[0]
        node = api.node(uuids[shown.name])
        ports = api.ports(node["uuid"])
        print(f"\n{shown.name} as Ironic now sees it:")
        print(
            json.dumps(
                {
                    "uuid": node["uuid"],
                    "power_state": node["power_state"],
                    "provision_state": node["provision_state"],
                    "properties": node["properties"],
                    "ports": [
                        {"address": p["address"], "pxe_enabled": p["pxe_enabled"]}
                        for p in ports
                    ],
                },
                indent=2,
            )
        )
        errors = {u: s for u, s in statuses.items() if s["state"] == "error"}
        repaired = [
            m
            for m in lab
            if m.behaviour == "normal"
            and statuses.get(uuids[m.name], {}).get("state") == "finished"
        ][:2]
        drifted = drift.reintrospect(url, uuids, repaired)
        drifted = drift.save_fleet_page(url, repaired, uuids) and drifted
        latencies = player.latencies()
        if latencies:
            median = latencies[len(latencies) // 2] * 1000
            print(
                f"\n/v1/continue median latency: {median:.1f} ms "
                f"({len(latencies)} callbacks)"
            )
        print(
            "CPU seconds during introspection: "
            + ", ".join(f"{name} {seconds:.1f}" for name, seconds in cpu.items())
            + "; peak RSS "
            + ", ".join(f"{name} {mib:.0f} MiB" for name, mib in rss.items())
        )
        print(
            f"{len(finished_at)}/{len(lab)} finished in {elapsed:.1f} s "
            f"({len(finished_at) / elapsed:.1f} machines/s); whole demo "
            f"{time.monotonic() - total_started:.1f} s"
        )
        if segment is not None:
            _pxe_summary(segment, player, lab, url)
        if options.keep_running:
            stage.keep_running(running, work, ironic)
        if errors:
            for uuid, status in errors.items():
                print(f"ERROR {uuid}: {status['error']}")
            return 1
        if not drifted:
            print("The repaired machines' changes were not as expected")
            return 1
        if len(finished_at) < len(lab):
            print(
                f"Timed out after {timeout:.0f} s waiting for "
                f"{len(lab) - len(finished_at)} machines; logs in {work}"
            )
            return 1
    if options.work_dir is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0
