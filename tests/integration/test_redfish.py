"""Out-of-band and auto introspection (API 1.26) with the real Ironic and
sushy-tools' Redfish emulator over libvirt's test driver: an out-of-band
run with no power or boot call in Ironic's access log, an ``auto`` run
falling back to the ramdisk for a machine without drives, and the errors
(wrong credentials, an unreachable BMC, a masked password) ending with a
clear message and nothing written to Ironic."""

import random
import signal
import time
import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import pytest

from lab.machines.hardware import Machine
from lab.machines.redfish_nodes import MachineBmc, ironic_redfish_node
from lab.servers import loopback
from lab.servers.inspector import InspectorServer
from lab.servers.ironic import IronicServer
from lab.servers.ironic_log import AccessLog
from lab.servers.redfish_emulator import (
    PASSWORD,
    USERNAME,
    EmulatedMachine,
    RedfishEmulator,
)
from lab.waiting import wait_until
from tests.integration.conftest import Client, Lab, start_inspector

V126 = {"X-OpenStack-Ironic-Inspector-API-Version": "1.26"}
BOOTING = ("/states/power", "/management/boot_device")
"""Ironic's endpoints an out-of-band run must never call for its node."""


@pytest.fixture(scope="module")
def inspector(
    ironic: IronicServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[InspectorServer]:
    server = start_inspector(
        tmp_path_factory.mktemp("inspector-redfish"),
        ironic,
        options={
            "redfish": {"retries": "0", "timeout": "5"},
            "processing": {"store_data": "database"},
        },
    )
    yield server
    assert server.stop() == 0, server.log_tail()


@pytest.fixture(scope="module")
def machines(lab_module: Lab) -> list[tuple[Machine, str, EmulatedMachine]]:
    """Three enrolled machines and their emulated systems: two with a
    drive, one without (its controller lists none: ``auto`` falls back)."""
    found = []
    for disk in (40, 40, 0):
        machine, node = lab_module.machine(enroll_port=False)
        macs = [machine.pxe_mac] + [
            i["mac_address"]
            for i in machine.inventory["interfaces"]
            if i["mac_address"] != machine.pxe_mac
        ][:1]
        emulated = EmulatedMachine(
            machine.name,
            str(uuidlib.uuid4()),
            macs,
            cpus=4,
            memory_gib=8,
            disk_gib=disk,
        )
        found.append((machine, node, emulated))
    return found


@pytest.fixture(scope="module")
def lab_module(ironic_api: Any) -> Lab:
    return Lab(ironic_api, seed=33)


@pytest.fixture(scope="module")
def ironic_systems() -> list[EmulatedMachine]:
    """A system for [redfish]engine = ironic, Ironic's own inspection
    (Ironic's failure is the functional tests': a real one costs a second
    node's verification and inspection, 15-40 s on the loaded machine)."""
    found = []
    for disk in (40,):
        macs = [
            "52:54:01:" + ":".join(f"{random.randrange(256):02x}" for _ in range(3))
            for _ in range(2)
        ]
        name = f"ironic-engine-{disk}-{random.randrange(10**6)}"
        found.append(
            EmulatedMachine(
                name, str(uuidlib.uuid4()), macs, cpus=4, memory_gib=8, disk_gib=disk
            )
        )
    return found


@pytest.fixture(scope="module")
def emulator(
    machines: list[tuple[Machine, str, EmulatedMachine]],
    ironic_systems: list[EmulatedMachine],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[RedfishEmulator]:
    server = RedfishEmulator(
        tmp_path_factory.mktemp("redfish"), [m[2] for m in machines] + ironic_systems
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture
def unmasked(ironic: IronicServer) -> Iterator[None]:
    """Ironic shows BMC passwords to the inspector (its show_password
    policy; the lab's Ironic has no authentication, so for everyone)."""
    ironic.set_policy({"show_password": "@"})
    yield
    ironic.set_policy({})


def _point_at(
    lab: Lab, node: str, address: str, system: str, password: str = PASSWORD
) -> None:
    values = {
        "redfish_address": address,
        "redfish_system_id": system,
        "redfish_username": USERNAME,
        "redfish_password": password,
    }
    lab.api.request(
        "PATCH",
        f"/v1/nodes/{node}",
        json=[
            {"op": "add", "path": f"/driver_info/{k}", "value": v}
            for k, v in values.items()
        ],
    )


def _start(client: Client, node: str, mode: str) -> Any:
    return client.post(f"/v1/introspection/{node}?mode={mode}", headers=V126)


def _booting_calls(access: AccessLog, node: str) -> list[str]:
    calls = access.per_node([node])[node]
    return [c for c in calls if c.startswith("PUT") and c.endswith(BOOTING)]


def test_out_of_band_never_boots(
    inspector: InspectorServer,
    emulator: RedfishEmulator,
    machines: list[tuple[Machine, str, EmulatedMachine]],
    lab_module: Lab,
    ironic: IronicServer,
    unmasked: None,
) -> None:
    client = Client(inspector.url)
    _machine, node, emulated = machines[0]
    _point_at(lab_module, node, emulator.url, emulator.system_id(emulated))
    access = AccessLog(ironic.log_file)
    assert _start(client, node, "out-of-band").status_code == 202
    status = client.wait_for(node, "finished", "error")
    assert status["error"] is None, status
    assert _booting_calls(access, node) == []
    ports = lab_module.api.request("GET", f"/v1/ports?node={node}&detail=true")
    assert sorted(p["address"] for p in ports["ports"]) == sorted(emulated.macs)
    props = lab_module.api.node(node)["properties"]
    assert props["cpus"] == 4
    assert props["memory_mb"] == 8192
    assert props["local_gb"] == 39
    assert props["cpu_arch"] == "x86_64"
    data = client.get(f"/v1/introspection/{node}/data").json()
    assert set(data["provenance"].values()) == {"redfish"}


def test_auto_falls_back_for_a_machine_without_drives(
    inspector: InspectorServer,
    emulator: RedfishEmulator,
    machines: list[tuple[Machine, str, EmulatedMachine]],
    lab_module: Lab,
    ironic: IronicServer,
    unmasked: None,
) -> None:
    client = Client(inspector.url)
    machine, node, emulated = machines[2]
    _point_at(lab_module, node, emulator.url, emulator.system_id(emulated))
    access = AccessLog(ironic.log_file)
    assert _start(client, node, "auto").status_code == 202
    client.wait_for(node, "waiting")  # the ramdisk is being booted
    # the check the out-of-band test makes sees an in-band start's calls
    assert _booting_calls(access, node)
    resp = client.post("/v1/continue", json=machine.payload())
    assert resp.status_code == 200, resp.text
    status = client.wait_for(node, "finished", "error")
    assert status["error"] is None, status
    data = client.get(f"/v1/introspection/{node}/data").json()
    assert data["provenance"]["disks"] == "ramdisk"
    assert "local_gb (no drives)" in data["redfish"]["lacking"]
    # the emulator says 8 GiB, the lab's ramdisk something else: kept
    assert any(d["fact"] == "memory" for d in data["disagreements"])
    props = lab_module.api.node(node)["properties"]
    assert props["local_gb"] > 0


@pytest.mark.parametrize("cause", ["credentials", "unreachable", "masked"])
def test_errors_write_nothing(
    inspector: InspectorServer,
    emulator: RedfishEmulator,
    machines: list[tuple[Machine, str, EmulatedMachine]],
    lab_module: Lab,
    ironic: IronicServer,
    cause: str,
) -> None:
    client = Client(inspector.url)
    _machine, node, emulated = machines[1]
    address, password = emulator.url, PASSWORD
    if cause == "credentials":
        password = "wrong"
    elif cause == "unreachable":
        address = f"http://127.0.0.1:{loopback.free_port()}"
    _point_at(lab_module, node, address, emulator.system_id(emulated), password)
    if cause != "masked":
        ironic.set_policy({"show_password": "@"})
    access = AccessLog(ironic.log_file)
    try:
        resp = _start(client, node, "out-of-band")
        if cause == "masked":
            assert resp.status_code == 400
            assert "show_password" in resp.json()["error"]["message"]
            return
        assert resp.status_code == 202, resp.text
        status = client.wait_for(node, "error", "finished")
    finally:
        ironic.set_policy({})
    assert status["state"] == "error"
    assert address in status["error"]
    expected = "refused the credentials" if cause == "credentials" else "reached"
    assert expected in status["error"]
    calls = access.per_node([node])[node]
    writes = [c for c in calls if not c.startswith("GET")]
    assert writes == [], writes


def test_auto_with_an_unreachable_bmc_finishes_in_band(
    inspector: InspectorServer,
    machines: list[tuple[Machine, str, EmulatedMachine]],
    lab_module: Lab,
    ironic: IronicServer,
) -> None:
    """A BMC that cannot be asked is, in auto, a reason to boot the
    ramdisk at once (out-of-band ends in error: the test above)."""
    client = Client(inspector.url)
    machine, node, emulated = machines[1]
    address = f"http://127.0.0.1:{loopback.free_port()}"
    _point_at(lab_module, node, address, "/redfish/v1/Systems/x", PASSWORD)
    ironic.set_policy({"show_password": "@"})
    try:
        started = time.monotonic()
        assert _start(client, node, "auto").status_code == 202
        status = client.wait_for(node, "waiting", "error", "finished")
        waited = time.monotonic() - started
    finally:
        ironic.set_policy({})
    assert status["state"] == "waiting", status
    assert waited < 10, waited  # [redfish]auto_budget's default
    resp = client.post("/v1/continue", json=machine.payload())
    assert resp.status_code == 200, resp.text
    status = client.wait_for(node, "finished", "error")
    assert status["error"] is None, status
    data = client.get(f"/v1/introspection/{node}/data").json()
    assert "could not be reached" in data["redfish"]["error"]
    assert set(data["provenance"].values()) == {"ramdisk"}


# [redfish]engine = ironic: Ironic's own redfish inspection asks the BMC


def _set_engine(server: InspectorServer, engine: str) -> None:
    """[redfish]engine of the running ``server``, by SIGHUP (the option is
    mutable): no second inspector to start."""
    text = server.config_file.read_text()
    lines = [line for line in text.splitlines() if not line.startswith("engine = ")]
    index = lines.index("[redfish]")
    lines.insert(index + 1, f"engine = {engine}")
    before = server.log_file.read_text().count("Configuration reloaded")
    server.config_file.write_text("\n".join(lines) + "\n")
    server.signal(signal.SIGHUP)
    wait_until(
        lambda: server.log_file.read_text().count("Configuration reloaded"),
        30,
        f"the inspector to reload [redfish]engine = {engine}",
        until=lambda count: count > before,
        interval=0.1,
    )


def _redfish_node(lab: Lab, emulator: RedfishEmulator, system: EmulatedMachine) -> str:
    """A node of Ironic's redfish driver, inspect interface redfish,
    manageable."""
    bmc = MachineBmc(
        system.name, emulator.url, emulator.system_id(system), USERNAME, PASSWORD
    )
    return ironic_redfish_node(lab.api, system.name, bmc)


def test_ironic_engine(
    inspector: InspectorServer,
    emulator: RedfishEmulator,
    ironic_systems: list[EmulatedMachine],
    machines: list[tuple[Machine, str, EmulatedMachine]],
    lab_module: Lab,
    ironic: IronicServer,
) -> None:
    """Out of band through Ironic's own redfish inspection, without
    Ironic's show_password policy: the system finishes (no power or boot
    call, no port twice, the same properties as Ironic's); a
    fake-hardware node is refused at once."""
    client = Client(inspector.url)
    [system] = ironic_systems
    node = _redfish_node(lab_module, emulator, system)
    _set_engine(inspector, "ironic")
    try:
        resp = _start(client, machines[0][1], "out-of-band")
        assert resp.status_code == 400
        assert "inspect_interface 'fake'" in resp.json()["error"]["message"]
        access = AccessLog(ironic.log_file)
        assert _start(client, node, "out-of-band").status_code == 202
        status = client.wait_for(node, "finished", "error", timeout=90)
    finally:
        _set_engine(inspector, "sushy")
    assert status["error"] is None, status
    assert _booting_calls(access, node) == []
    calls = access.per_node([node])[node]
    assert calls["PUT /v1/nodes/<uuid>/states/provision"] == 1
    assert calls["GET /v1/nodes/<uuid>/inventory"] == 1
    ports = lab_module.api.ports(node)
    assert sorted(p["address"] for p in ports) == sorted(system.macs)
    props = lab_module.api.node(node)["properties"]
    assert (props["memory_mb"], props["local_gb"], props["cpu_arch"]) == (
        8192,
        39,
        "x86_64",
    )
    assert props["cpus"] == 4  # ours: Ironic 39 sets none out of band
    data = client.get(f"/v1/introspection/{node}/data").json()
    assert set(data["provenance"].values()) == {"redfish"}
    assert data["redfish"]["engine"] == "ironic"
