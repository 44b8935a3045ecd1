"""The out-of-band benchmark (``make bench BENCH_SCALE=redfish``): N
machines of sushy-tools' emulator, enrolled into the lab's real Ironic,
introspected out of band at once; the inspector's CPU per machine (the
process tree's user + system time during the run) and the wall time from
the first start to the last ``finished``. The emulator's and Ironic's CPU
are reported beside it: on this machine they share the same cores.
"""

import concurrent.futures
import pathlib
import tempfile
import time
import uuid as uuidlib
from typing import Any

import requests

from lab import enroll, machines, procstat
from lab.inspector_server import InspectorServer
from lab.ironic_server import INTERFACES, IronicServer, default_cache_dir
from lab.redfish_emulator import PASSWORD, USERNAME, EmulatedMachine, RedfishEmulator
from lab.waiting import wait_until

V126 = {"X-OpenStack-Ironic-Inspector-API-Version": "1.26"}


REDFISH_INTERFACES = {
    **INTERFACES,
    "enabled_hardware_types": "fake-hardware,redfish",
    "enabled_boot_interfaces": "fake,pxe",
    "enabled_deploy_interfaces": "fake,direct",
    "enabled_inspect_interfaces": "fake,no-inspect,redfish",
    "enabled_management_interfaces": "fake,redfish",
    "enabled_power_interfaces": "fake,redfish",
}
"""The lab's interfaces, and what Ironic's ``redfish`` hardware type needs
to load (its own inspection of the same emulated machines)."""


class RedfishIronic(IronicServer):
    """The lab's Ironic with the ``redfish`` hardware type enabled too."""

    def _write_config(self) -> None:
        super()._write_config()
        lines = self.config_file.read_text().splitlines()
        for index, line in enumerate(lines):
            key = line.split(" = ", 1)[0]
            if key in REDFISH_INTERFACES:
                lines[index] = f"{key} = {REDFISH_INTERFACES[key]}"
        self.config_file.write_text("\n".join(lines) + "\n")


def _ironic_inspects(
    api: enroll.IronicAPI,
    ironic: IronicServer,
    emulator: RedfishEmulator,
    systems: list[EmulatedMachine],
) -> dict[str, Any]:
    """Ironic's own ``redfish`` inspection of ``systems`` (nodes of driver
    ``redfish``), all at once: its CPU and the wall time."""

    def enroll_one(system: EmulatedMachine) -> str:
        node = api.request(
            "POST",
            "/v1/nodes",
            json={
                "name": f"ironic-{system.name}",
                "driver": "redfish",
                "inspect_interface": "redfish",
                "driver_info": {
                    "redfish_address": emulator.address,
                    "redfish_system_id": emulator.system_id(system),
                    "redfish_username": USERNAME,
                    "redfish_password": PASSWORD,
                },
            },
        )
        return str(node["uuid"])

    # Ironic's redfish "manage" checks each BMC (a session, its PBKDF2):
    # few at a time, so the lab's one Ironic process keeps answering
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        uuids = list(pool.map(enroll_one, systems))
    for uuid in uuids:
        api.request(
            "PUT", f"/v1/nodes/{uuid}/states/provision", json={"target": "manage"}
        )

    def states() -> list[str]:
        # one listing: a poll per node kept the busy Ironic busier
        listed = api.request("GET", "/v1/nodes?fields=uuid,provision_state&limit=1000")
        by_uuid = {n["uuid"]: n["provision_state"] for n in listed["nodes"]}
        return [by_uuid.get(u, "") for u in uuids]

    wait_until(
        states,
        120 + 3 * len(uuids),
        "Ironic's redfish nodes to be manageable",
        until=lambda found: all(s == "manageable" for s in found),
        ignoring=(RuntimeError, requests.RequestException),
        interval=0.5,
    )
    before = procstat.cpu_seconds(ironic.pid or 0)
    started = time.monotonic()
    for uuid in uuids:
        api.request(
            "PUT", f"/v1/nodes/{uuid}/states/provision", json={"target": "inspect"}
        )
    found = wait_until(
        states,
        120 + 2 * len(uuids),
        "Ironic's inspections to end",
        until=lambda found: all(s in ("manageable", "inspect failed") for s in found),
        ignoring=(RuntimeError, requests.RequestException),
        interval=0.5,
    )
    wall = time.monotonic() - started
    cpu = procstat.cpu_seconds(ironic.pid or 0) - before
    failed = [u for u, s in zip(uuids, found, strict=True) if s == "inspect failed"]
    return {
        "wall_s": round(wall, 2),
        "failed": len(failed),
        "first_failure": api.node(failed[0]).get("last_error") if failed else None,
        "ironic_cpu_s": round(cpu, 2),
        "ironic_cpu_ms_per_machine": round(1000 * cpu / len(uuids), 1),
        "machines": len(uuids),
    }


def _point_at(api: enroll.IronicAPI, node: str, address: str, system: str) -> None:
    values = {
        "redfish_address": address,
        "redfish_system_id": system,
        "redfish_username": USERNAME,
        "redfish_password": PASSWORD,
    }
    api.request(
        "PATCH",
        f"/v1/nodes/{node}",
        json=[
            {"op": "add", "path": f"/driver_info/{k}", "value": v}
            for k, v in values.items()
        ],
    )


def run(
    count: int,
    max_per_host: int,
    work_dir: pathlib.Path | None = None,
    with_ironic: bool = False,
    ironic_count: int = 20,
) -> dict[str, Any]:
    """One run of ``count`` machines; the measurements. ``with_ironic``:
    then Ironic's own ``redfish`` inspection of ``count`` more emulated
    machines of the same shape, in the same run."""
    work = work_dir or pathlib.Path(tempfile.mkdtemp(prefix="redfish-bench-"))
    lab_machines = [machines.make_machine(i, seed=33) for i in range(1, count + 1)]
    for machine in lab_machines:
        machine.enroll_port = False
    emulated = [
        EmulatedMachine(
            m.name,
            str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, m.name)),
            [m.pxe_mac],
            cpus=4,
            memory_gib=16,
            disk_gib=100,
        )
        for m in lab_machines
    ]
    theirs = (
        [
            EmulatedMachine(
                f"theirs-{m.name}",
                str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"theirs-{m.name}")),
                [m.macs[0][:-5] + "ff:" + m.macs[0][-2:]],
                cpus=m.cpus,
                memory_gib=m.memory_gib,
                disk_gib=m.disk_gib,
            )
            for m in emulated[:ironic_count]
        ]
        if with_ironic
        else []
    )
    server = RedfishIronic if with_ironic else IronicServer
    with server(default_cache_dir(), work / "ironic") as ironic:
        ironic.set_policy({"show_password": "@"})
        api = enroll.IronicAPI(ironic.url)
        nodes = enroll.enroll(api, lab_machines)
        emulator = RedfishEmulator(work / "emulator", emulated + theirs)
        emulator.start()
        try:
            uuids = [nodes[m.name] for m in lab_machines]
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                list(
                    pool.map(
                        lambda pair: _point_at(
                            api, pair[0], emulator.address, emulator.system_id(pair[1])
                        ),
                        zip(uuids, emulated, strict=True),
                    )
                )
            inspector = InspectorServer(
                work / "inspector",
                ironic.url,
                options={
                    "redfish": {"max_per_host": str(max_per_host)},
                    "processing": {"store_data": "database"},
                },
            )
            inspector.start()
            try:
                result = _measure(inspector, ironic, emulator, uuids)
            finally:
                inspector.stop()
            if with_ironic:
                try:
                    result["ironic_redfish"] = _ironic_inspects(
                        api, ironic, emulator, theirs
                    )
                except (RuntimeError, TimeoutError, requests.RequestException) as exc:
                    # our numbers stand; say why theirs are missing
                    result["ironic_redfish"] = {"error": str(exc)[:500]}
        finally:
            emulator.stop()
    result.update(machines=count, max_per_host=max_per_host)
    return result


def _measure(
    inspector: InspectorServer,
    ironic: IronicServer,
    emulator: RedfishEmulator,
    uuids: list[str],
) -> dict[str, Any]:
    http = requests.Session()
    pids = {"inspector": inspector.pid, "ironic": ironic.pid, "emulator": emulator.pid}
    before = {k: procstat.cpu_seconds(p) for k, p in pids.items() if p}
    started = time.monotonic()

    def start(node: str) -> None:
        resp = requests.post(
            f"{inspector.url}/v1/introspection/{node}?mode=out-of-band",
            headers=V126,
            timeout=30,
        )
        resp.raise_for_status()

    # all at once, as a client starting a rack would (one at a time the
    # API's answer, not the work, sets the pace)
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(start, uuids))

    def ended() -> list[dict[str, Any]]:
        body = http.get(f"{inspector.url}/v1/introspection?limit=0", timeout=30).json()[
            "introspection"
        ]
        return [s for s in body if s["uuid"] in set(uuids) and s["finished"]]

    done = wait_until(
        ended,
        60 + 2 * len(uuids),
        "every machine to finish",
        until=lambda found: len(found) == len(uuids),
        interval=0.2,
    )
    wall = time.monotonic() - started
    after = {k: procstat.cpu_seconds(p) for k, p in pids.items() if p}
    errors = [s["error"] for s in done if s["error"]]
    cpu = {k: round(after[k] - before[k], 2) for k in before}
    return {
        "wall_s": round(wall, 2),
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "cpu_s": cpu,
        "inspector_cpu_ms_per_machine": round(1000 * cpu["inspector"] / len(uuids), 1),
    }


def report(result: dict[str, Any]) -> str:
    theirs = result.get("ironic_redfish")
    if theirs and "error" in theirs:
        return _ours(result) + f"\nIronic's redfish inspection: {theirs['error']}"
    if theirs:
        return _ours(result) + (
            f"\nIronic's redfish inspection of {theirs['machines']}: "
            f"{theirs['wall_s']} s "
            f"wall, {theirs['failed']} failed; Ironic CPU "
            f"{theirs['ironic_cpu_ms_per_machine']} ms per machine"
        )
    return _ours(result)


def _ours(result: dict[str, Any]) -> str:
    return (
        f"{result['machines']} machines out of band (max_per_host "
        f"{result['max_per_host']}): {result['wall_s']} s wall, "
        f"{result['errors']} errors; inspector CPU "
        f"{result['inspector_cpu_ms_per_machine']} ms per machine; CPU s "
        f"{result['cpu_s']}"
    )
