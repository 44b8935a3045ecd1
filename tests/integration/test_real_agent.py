"""The real ironic-python-agent 13.0.0 inspecting this machine.

IPA's own collectors gather this machine's inventory and its own HTTP client
posts it to the real ``ironic-inspector`` process, which writes the results
into a real Ironic. Only the kernel command line is emulated (``BOOTIF`` in
PXELINUX's and iPXE's forms, naming a real NIC) and only the agent's
start-up steps that would change the host are skipped (lab/real_agent.py);
nothing powers this machine: introspection runs with ``manage_boot=false``.
The results are checked against what this machine is: /proc/cpuinfo,
/proc/meminfo, ``lsblk``, /sys/class/net and ``platform.machine()``.
"""

import json
import os
import pathlib
import platform
import subprocess
import tarfile
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from lab.machines.enroll import IronicAPI
from lab.machines.real_agent import MIN_ROOT_DISK, AgentRun, AgentUnavailable, RealAgent
from lab.machines.real_agent import nic_macs as machine_nics
from lab.servers.inspector import InspectorServer
from lab.servers.ironic import IronicServer
from lab.venvs import default_cache_dir
from lab.waiting import wait_until
from tests.integration.conftest import Client, start, start_inspector

GiB = 1024**3


# What this machine is, read without IPA.


def cpuinfo_processors() -> int:
    text = pathlib.Path("/proc/cpuinfo").read_text()
    return sum(1 for line in text.splitlines() if line.startswith("processor"))


def meminfo_total_mib() -> int:
    for line in pathlib.Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    raise AssertionError("no MemTotal in /proc/meminfo")


def lsblk_disks() -> dict[str, int]:
    """Whole disks with a size, /dev/NAME -> bytes."""
    out = subprocess.run(
        ["lsblk", "--bytes", "--nodeps", "--json", "--output", "KNAME,SIZE,TYPE"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return {
        f"/dev/{dev['kname']}": int(dev["size"])
        for dev in json.loads(out)["blockdevices"]
        if dev["type"] == "disk" and int(dev["size"] or 0) > 0
    }


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> RealAgent:
    real = RealAgent(default_cache_dir(), tmp_path_factory.mktemp("real-agent"))
    try:
        real.install()
    except AgentUnavailable as exc:
        pytest.skip(f"the real agent cannot run here: {exc}")
    return real


@pytest.fixture(scope="module")
def boot_nic() -> tuple[str, str]:
    """The NIC ``BOOTIF`` names: this machine's first NIC with a MAC."""
    nics = machine_nics(physical_only=True)
    if not nics:
        pytest.skip(
            "no NIC with a device link in /sys/class/net: nothing to PXE-boot "
            "from, so BOOTIF cannot name one (IPA would ignore a dummy one)"
        )
    return next(iter(nics.items()))


Inspector = tuple[InspectorServer, pathlib.Path]
"""A standalone process and the folder it writes the agent's logs to."""


@pytest.fixture(scope="module")
def inspector_with(
    ironic: IronicServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[str], Inspector]]:
    """``inspector_with(add_ports)``: the standalone process with that
    ``[processing]add_ports``, keeping the agent's logs (always); started on
    first use, one per setting for the module."""
    servers: dict[str, Inspector] = {}

    def get(add_ports: str) -> Inspector:
        if add_ports not in servers:
            work = tmp_path_factory.mktemp(f"inspector-real-agent-{add_ports}")
            logs = work / "ramdisk-logs"
            logs.mkdir()
            processing = {
                "add_ports": add_ports,
                "ramdisk_logs_dir": str(logs),
                "always_store_ramdisk_logs": "True",
            }
            server = start_inspector(work, ironic, options={"processing": processing})
            servers[add_ports] = (server, logs)
        return servers[add_ports]

    yield get
    for server, _logs in servers.values():
        assert server.stop() == 0, server.log_tail()


@pytest.fixture
def node(ironic_api: IronicAPI, boot_nic: tuple[str, str]) -> Iterator[str]:
    """This machine as an Ironic node: its boot NIC's port (``pxe_enabled``
    false: the service must set it), no BMC address. Deleted afterwards, so
    the next test can enroll the same MAC."""
    _name, mac = boot_nic
    uuid = str(
        ironic_api.request(
            "POST",
            "/v1/nodes",
            json={"driver": "fake-hardware", "resource_class": "baremetal"},
        )["uuid"]
    )
    try:
        ironic_api.request(
            "POST",
            "/v1/ports",
            json={"node_uuid": uuid, "address": mac, "pxe_enabled": False},
        )
        ironic_api.request(
            "PUT", f"/v1/nodes/{uuid}/states/provision", json={"target": "manage"}
        )
        _wait_manageable(ironic_api, uuid)
        yield uuid
    finally:
        ironic_api.request("DELETE", f"/v1/nodes/{uuid}")


def _wait_manageable(api: IronicAPI, uuid: str) -> None:
    wait_until(
        lambda: api.node(uuid),
        60,
        f"{uuid} to become manageable",
        until=lambda node: node["provision_state"] == "manageable",
        interval=0.1,
    )


def run_agent(
    agent: RealAgent,
    client: Client,
    uuid: str,
    mac: str,
    form: str,
    hide_disks_from: int | None = None,
) -> AgentRun:
    """Starts introspecting ``uuid`` without managing boot, then runs the
    real agent as the machine's ramdisk would; it must post and exit 0."""
    start(client, uuid, "?manage_boot=false")
    client.wait_for(uuid, "waiting")
    run = agent.run(
        client.url + "/v1/continue", mac, form, hide_disks_from=hide_disks_from
    )
    assert run.returncode == 0, run.log[-5000:]
    assert run.result["uuid"] == uuid, run.result
    return run


def check_against_machine(
    api: IronicAPI, client: Client, uuid: str, boot_mac: str, add_ports: str
) -> dict[str, Any]:
    """The node as the service wrote it, against IPA's data and this
    machine. Returns the node's properties."""
    raw = client.get(f"/v1/introspection/{uuid}/data/unprocessed").json()
    inventory = raw["inventory"]

    # CPUs: IPA counts lscpu's CPU(s)
    props = api.node(uuid)["properties"]
    assert props["cpus"] == inventory["cpu"]["count"]
    assert props["cpus"] == cpuinfo_processors() == os.cpu_count()
    assert props["cpu_arch"] == inventory["cpu"]["architecture"]
    assert props["cpu_arch"] == platform.machine()

    # memory: IPA's physical size (lshw, rounded to whole banks or MB) is
    # at least what the kernel manages, and not much more
    physical_mb = inventory["memory"]["physical_mb"]
    assert props["memory_mb"] == physical_mb
    total = meminfo_total_mib()
    assert 0.98 * total <= physical_mb <= 1.25 * total + 512, (physical_mb, total)
    # psutil's total is MemTotal (a balloon driver may move it a little)
    assert abs(inventory["memory"]["total"] // 2**20 - total) <= total // 100 + 16

    # disks: what IPA saw is what lsblk sees; the root disk is the smallest
    # of at least 4 GiB, local_gb its size in GiB less 1 (0 if none)
    disks = lsblk_disks()
    seen = {d["name"]: d["size"] for d in inventory["disks"]}
    assert all(disks.get(name) == size for name, size in seen.items()), (
        seen,
        disks,
    )
    big = sorted((size, name) for name, size in seen.items() if size >= MIN_ROOT_DISK)
    if big:
        size, name = big[0]
        assert raw["root_disk"]["name"] == name
        assert props["local_gb"] == size // GiB - 1
    else:
        assert "root_disk" not in raw
        assert props["local_gb"] == 0

    # NICs: IPA reports this machine's NICs; ports as add_ports says, the
    # boot NIC's pxe_enabled
    reported = {
        i["name"]: i["mac_address"].lower()
        for i in inventory["interfaces"]
        if i.get("mac_address")
    }
    assert reported == machine_nics()
    wanted = {boot_mac} if add_ports == "pxe" else set(reported.values())
    ports = {p["address"]: p["pxe_enabled"] for p in api.ports(uuid)}
    assert set(ports) == wanted, ports
    assert ports[boot_mac] is True
    assert not any(enabled for mac, enabled in ports.items() if mac != boot_mac)
    return dict(props)


@pytest.mark.parametrize(
    ("form", "add_ports"), [("pxelinux", "pxe"), ("ipxe", "pxe"), ("pxelinux", "all")]
)
def test_real_agent_inspects_this_machine(
    agent: RealAgent,
    inspector_with: Callable[[str], Inspector],
    ironic_api: IronicAPI,
    node: str,
    boot_nic: tuple[str, str],
    form: str,
    add_ports: str,
) -> None:
    server, logs = inspector_with(add_ports)
    client = Client(server.url)
    _name, mac = boot_nic
    run = run_agent(agent, client, node, mac, form)

    expected_bootif = "01-" + mac.replace(":", "-") if form == "pxelinux" else mac
    assert run.result["params"]["BOOTIF"] == expected_bootif
    status = client.wait_for(node, "finished", "error")
    assert status["state"] == "finished", (status, server.log_tail())
    assert status["error"] is None
    props = check_against_machine(ironic_api, client, node, mac, add_ports)
    raw = client.get(f"/v1/introspection/{node}/data/unprocessed").json()
    assert raw["inventory"]["boot"]["pxe_interface"] == expected_bootif
    assert raw["error"] is None
    assert "logs" not in raw

    # the agent's logs collector sent a gzipped tarball: written, by node
    written = [p for p in logs.iterdir() if p.name.startswith(node)]
    assert len(written) == 1, sorted(logs.iterdir())
    with tarfile.open(written[0]) as tar:
        assert tar.getnames()

    # reapplying the stored data finishes again with the same result
    finished_at = status["finished_at"]
    resp = client.post(f"/v1/introspection/{node}/data/unprocessed")
    assert resp.status_code == 202, resp.text
    again = wait_until(
        lambda: client.get(f"/v1/introspection/{node}").json(),
        30,
        f"{node} to end its reapply",
        until=lambda body: (
            body["state"] in ("finished", "error")
            and body["finished_at"] != finished_at
        ),
    )
    assert again["state"] == "finished", (again, server.log_tail())
    assert check_against_machine(ironic_api, client, node, mac, add_ports) == props


def test_real_agent_without_a_root_disk(
    agent: RealAgent,
    inspector_with: Callable[[str], Inspector],
    ironic_api: IronicAPI,
    node: str,
    boot_nic: tuple[str, str],
) -> None:
    """IPA sees no disk of 4 GiB or more (its block-device list filtered in
    the child): it posts no root disk; the node finishes with local_gb 0."""
    server, _logs = inspector_with("pxe")
    client = Client(server.url)
    _name, mac = boot_nic
    run = run_agent(agent, client, node, mac, "ipxe", hide_disks_from=MIN_ROOT_DISK)
    assert sorted(run.result["hidden_disks"]) == sorted(
        name for name, size in lsblk_disks().items() if size >= MIN_ROOT_DISK
    )
    status = client.wait_for(node, "finished", "error")
    assert status["state"] == "finished", (status, server.log_tail())
    raw = client.get(f"/v1/introspection/{node}/data/unprocessed").json()
    assert "root_disk" not in raw
    assert all(d["size"] < MIN_ROOT_DISK for d in raw["inventory"]["disks"])
    props = ironic_api.node(node)["properties"]
    assert props["local_gb"] == 0
    assert props["cpus"] == cpuinfo_processors()
    assert props["memory_mb"] == raw["inventory"]["memory"]["physical_mb"]
