"""The demo: a real Ironic, the standalone inspector, N machines introspected."""

import concurrent.futures
import contextlib
import dataclasses
import json
import pathlib
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from typing import Any

import requests

from inspector import bootstrap
from lab import drift, lldp, machines, procstat
from lab.apache_server import ApacheApiServer
from lab.dhcp import DhcpSegment
from lab.enroll import IronicAPI, enroll
from lab.inspector_server import InspectorServer
from lab.ironic_server import IronicServer, default_cache_dir
from lab.machines import GiB, Machine
from lab.progress import Progress
from lab.ramdisk import RamdiskPlayer
from lab.split_cluster import SplitCluster


@dataclasses.dataclass
class DemoOptions:
    machines: int = 20
    seed: int = 0
    keep_running: bool = False
    work_dir: pathlib.Path | None = None
    timeout: float | None = None
    split: int | None = None
    """Conductors of the split shape; None runs the standalone process."""
    split_api: str = "apache"
    """Where the split API runs: under Apache (mod_wsgi) or "local"."""
    rpc_transport: str = "oslo"
    """How the split API hands work to the conductors: "oslo" or "json-rpc"."""
    pxe: bool = False
    """Standalone: machines boot through real DHCP from a dnsmasq guarded by
    the inspector's PXE filter before their ramdisk posts."""


@dataclasses.dataclass
class Running:
    """The inspector processes of one shape, as the demo and bench see them."""

    url: str
    cpu_pids: dict[str, int]
    """Name -> PID whose process tree's CPU time is counted."""
    rss_pids: dict[str, int]
    """Name -> PID of each process whose peak memory is reported."""
    cluster: SplitCluster | None = None
    segment: "DhcpSegment | None" = None
    """The DHCP segment the machines boot from (``--pxe``)."""


def start_inspector(
    options: DemoOptions, work: pathlib.Path, ironic_url: str, stack: Any
) -> Running:
    """Start the chosen shape and register its stop on ``stack``."""
    if options.split is None:
        extra: dict[str, dict[str, str]] = {}
        if options.pxe:
            segment = DhcpSegment(work / "dhcp")
            stack.callback(segment.close)
            segment.start()
            server = segment.servers[0]
            extra = {
                "pxe_filter": {"driver": "dnsmasq", "sync_period": "5"},
                "dnsmasq_pxe_filter": {
                    "dhcp_hostsdir": str(server.hostsdir),
                    "dnsmasq_start_command": server.start_command(),
                    "dnsmasq_stop_command": server.stop_command(),
                },
            }
        inspector = InspectorServer(work / "inspector", ironic_url, options=extra)
        inspector.start()
        stack.callback(inspector.stop)
        assert inspector.pid is not None
        pids = {"inspector": inspector.pid}
        found = segment if options.pxe else None
        return Running(inspector.url, pids, pids, segment=found)
    cluster = SplitCluster(
        work / "split",
        ironic_url,
        conductors=options.split,
        api_server=options.split_api,
        rpc_transport=options.rpc_transport,
    )
    stack.callback(cluster.stop)
    cluster.start()
    api = cluster.api
    assert api is not None and api.pid is not None
    cpu = {"API": api.pid}
    if isinstance(api, ApacheApiServer):
        daemons = api.daemon_pids()
        rss = {f"API-{n}": pid for n, pid in enumerate(daemons, 1)}
    else:
        rss = dict(cpu)
    for conductor in cluster.conductors:
        assert conductor.pid is not None
        name = conductor.host.replace("lab-", "")
        cpu[name] = rss[name] = conductor.pid
    if cluster.rpc_transport == "oslo":  # the broker is part of the cost
        broker = cluster.rabbit.pid_file.read_text().split()
        if broker and broker[0].isdigit():
            cpu["RabbitMQ"] = rss["RabbitMQ"] = int(broker[0])
    return Running(cluster.url, cpu, rss, cluster)


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


def _shape(options: DemoOptions) -> str:
    if options.split is None:
        return (
            "standalone, PXE from a filtered dnsmasq" if options.pxe else "standalone"
        )
    api = "under Apache" if options.split_api == "apache" else "on its own server"
    casts = {
        "json-rpc": "JSON-RPC, no broker",
        "json-rpc-tls": "JSON-RPC over TLS, no broker",
    }.get(options.rpc_transport, "RabbitMQ")
    return f"split: API {api}, {options.split} conductors, casts over {casts}"


def _phase(name: str, started: float) -> None:
    print(f"  {name:<38} {time.monotonic() - started:6.1f} s", flush=True)


def states(url: str) -> dict[str, dict[str, Any]]:
    items = requests.get(f"{url}/v1/introspection?limit=0", timeout=30).json()
    return {i["uuid"]: i for i in items["introspection"]}


def start_all(url: str, uuids: list[str], workers: int = 8) -> dict[str, float]:
    """Start every introspection, several at a time, like an operator's script."""
    local = threading.local()

    def start(uuid: str) -> tuple[str, float]:
        if not hasattr(local, "http"):
            local.http = requests.Session()
        try:
            resp = local.http.post(f"{url}/v1/introspection/{uuid}", timeout=60)
        except requests.ConnectionError:
            # Apache's event MPM closes idle keep-alive connections when its
            # workers are busy; one reused at that moment is closed before
            # the request is read: again, on a new connection
            local.http = requests.Session()
            resp = local.http.post(f"{url}/v1/introspection/{uuid}", timeout=60)
        if resp.status_code != 202:
            raise RuntimeError(
                f"Starting introspection of {uuid} failed: "
                f"{resp.status_code} {resp.text}"
            )
        return uuid, time.monotonic()

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        return dict(pool.map(start, uuids))


def hardware_cells(data: dict[str, Any] | None) -> list[str]:
    """The CPUs, memory, root disk and NIC count of a machine's stored
    data as the demos' tables show them ("-" each without data)."""
    if not data:
        return ["-"] * 4
    disk = data.get("root_disk") or {}
    root = f"{disk.get('name', '?')} {disk.get('size', 0) // GiB} GiB" if disk else "-"
    return [
        str(data.get("cpus", "-")),
        f"{data.get('memory_mb', 0) // 1024} GiB",
        root,
        str(len(data.get("all_interfaces") or {})),
    ]


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


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*r) for r in rows]
    return "\n".join(lines)


def prepare(options: DemoOptions, prefix: str) -> tuple[pathlib.Path, float]:
    """A demo's work directory (made, named) and how long it waits."""
    work = options.work_dir or pathlib.Path(tempfile.mkdtemp(prefix=prefix))
    work.mkdir(parents=True, exist_ok=True)
    print(f"Lab work directory: {work}")
    return work, options.timeout or 120 + 2 * options.machines


def start_ironic(work: pathlib.Path, stack: Any) -> IronicServer:
    """The lab's Ironic in ``work``, its stop registered on ``stack``."""
    started = time.monotonic()
    ironic = IronicServer(default_cache_dir(), work / "ironic")
    ironic.start()
    stack.callback(ironic.stop)
    _phase(f"Ironic up at {ironic.url}", started)
    return ironic


def run(options: DemoOptions) -> int:
    total_started = time.monotonic()
    work, timeout = prepare(options, "inspector-demo-")
    with contextlib.ExitStack() as stack:
        ironic = start_ironic(work, stack)

        started = time.monotonic()
        running = start_inspector(options, work, ironic.url, stack)
        url = running.url
        _phase(f"inspector ({_shape(options)}) up at {url}", started)

        started = time.monotonic()
        lab = machines.make_lab(options.machines, options.seed)
        api = IronicAPI(ironic.url)
        uuids = enroll(api, lab)
        _phase(f"{len(lab)} machines enrolled (manageable)", started)

        # a 0.5 s watch keeps the player's own node listing off Ironic's CPU
        probe = _dhcp_probe(running.segment) if running.segment else None
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
        progress = Progress(len(lab))
        finished_at: dict[str, float] = {}
        deadline = time.monotonic() + timeout
        statuses: dict[str, dict[str, Any]] = {}
        while True:
            statuses = states(url)
            for uuid, status in statuses.items():
                if status["finished"] and uuid not in finished_at:
                    finished_at[uuid] = time.monotonic()
            counts = Counter(s["state"] for s in statuses.values())
            progress.update(counts)
            if len(finished_at) == len(lab) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        progress.finish(counts)
        elapsed = time.monotonic() - started
        _phase("introspection of every machine", started)
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
            _table(
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
        if running.segment is not None:
            _pxe_summary(running.segment, player, lab, url)
        if options.keep_running:
            _keep_running(running, work, ironic)
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


def _keep_running(running: Running, work: pathlib.Path, ironic: IronicServer) -> None:
    url = running.url
    where = [f"Ironic: {ironic.url} (log {ironic.log_file})"]
    cluster = running.cluster
    if cluster is None:
        where.append(f"inspector: {url} (log {work / 'inspector' / 'inspector.log'})")
        where.append(f"the fleet page: {url}/fleet")
    else:
        assert cluster.api is not None
        api = "Apache + mod_wsgi" if cluster.api_server == "apache" else "local server"
        where.append(f"API ({api}): {url} (logs in {cluster.api.work_dir})")
        for c in cluster.conductors:
            rpc = c.options.get("json_rpc", {}).get("port")
            scheme = "https" if cluster.rpc_tls else "http"
            endpoint = f" (JSON-RPC {scheme}://127.0.0.1:{rpc}/)" if rpc else ""
            where.append(f"{c.host}: log {c.log_file}{endpoint}")
        where.append(f"etcd: {cluster.etcd.client_url}")
        if cluster.rpc_transport == "oslo":
            where.append(f"RabbitMQ: {cluster.rabbit.transport_url}")
        where.append(f"PostgreSQL: {cluster.database_url}")
    print(
        f"""
The lab keeps running. In another shell:

  pip install python-openstackclient python-ironic-inspector-client
  export OS_AUTH_TYPE=none
  openstack --os-endpoint {url} baremetal introspection list
  openstack --os-endpoint {url} baremetal introspection status lab-0001
  openstack --os-endpoint {url} baremetal introspection data save lab-0001
  openstack --os-endpoint {url} baremetal introspection start lab-0002 --wait
  openstack --os-endpoint {ironic.url} baremetal node list   # Ironic itself

The lab's ramdisks answer a machine powered on by introspection while this
runs, so "start" finishes by itself.

"""
        + "\n".join(f"  {line}" for line in where)
        + "\n\nPress Ctrl-C to stop.",
        flush=True,
    )
    # Ctrl-C or a plain kill both stop the lab cleanly (a shell that started
    # this in the background may have left SIGINT ignored), whichever of
    # the lab's threads the kernel hands the signal to
    with contextlib.closing(
        bootstrap.receive_signals((signal.SIGINT, signal.SIGTERM))
    ) as received:
        next(received)
    print("\nStopping.", file=sys.stderr)
