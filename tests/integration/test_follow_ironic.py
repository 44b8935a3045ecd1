"""Following Ironic 39's own inspections (issue 47): a real Ironic
inspects (agent, through /v1/continue_inspection, the test as the
ramdisk); the service records each inspection as one run of the node's
history, whatever inspected it before, once, across a restart; and with
Ironic's notifications over a real RabbitMQ, within seconds."""

import copy
import pathlib
import random
import time
import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import pytest

from lab.machines import ironic_agent
from lab.machines.enroll import IronicAPI
from lab.machines.hardware import Machine
from lab.machines.redfish_nodes import MachineBmc, ironic_redfish_node
from lab.servers.inspector import InspectorServer
from lab.servers.ironic import IronicServer
from lab.servers.rabbitmq import RabbitMQServer
from lab.servers.redfish_emulator import (
    PASSWORD,
    USERNAME,
    EmulatedMachine,
    RedfishEmulator,
)
from lab.venvs import default_cache_dir
from lab.waiting import wait_until
from tests.integration.conftest import Client, Lab, metric, start_inspector

FOLLOW = {"enabled": "True", "poll_interval": "1", "full_scan_interval": "0"}


@pytest.fixture(scope="module")
def inspector(
    ironic: IronicServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[InspectorServer]:
    server = start_inspector(
        tmp_path_factory.mktemp("inspector-follow"),
        ironic,
        options={"ironic_follow": FOLLOW},
    )
    yield server
    assert server.stop() == 0, server.log_tail()


@pytest.fixture(scope="module")
def lab_module(ironic_api: IronicAPI) -> Lab:
    return Lab(ironic_api, seed=47)


def history(client: Client, uuid: str) -> list[dict[str, Any]]:
    resp = client.get(f"/v1/introspection/{uuid}/history")
    if resp.status_code == 404:
        return []
    assert resp.status_code == 200, resp.text
    entries: list[dict[str, Any]] = resp.json()["history"]
    return entries


def recorded(client: Client, uuid: str, runs: int, timeout: float = 30) -> Any:
    """The node's history once it holds ``runs`` runs."""
    return wait_until(
        lambda: history(client, uuid),
        timeout,
        f"{runs} runs of {uuid} in the history",
        until=lambda found: len(found) >= runs,
        interval=0.2,
    )


def replaced_disk(machine: Machine) -> dict[str, Any]:
    payload = copy.deepcopy(machine.payload())
    payload["inventory"]["disks"][0]["serial"] = "REPLACED-" + machine.name
    return payload


def test_each_inspection_is_one_run_of_its_history(
    inspector: InspectorServer, lab_module: Lab
) -> None:
    client = Client(inspector.url)
    machine, uuid = lab_module.machine()

    ironic_agent.inspect(lab_module.api, uuid, machine.payload())
    [run] = recorded(client, uuid, 1)

    assert (run["source"], run["interface"], run["state"]) == (
        "ironic",
        "agent",
        "finished",
    )
    status = client.get(f"/v1/introspection/{uuid}").json()
    assert status["finished"] and status["error"] is None

    ironic_agent.inspect(lab_module.api, uuid, replaced_disk(machine))
    newest, first = recorded(client, uuid, 2)
    assert first["uuid"] == run["uuid"] and newest["changes"] == 2
    changes = client.get(f"/v1/introspection/{uuid}/changes").json()["changes"]
    kinds = {(c["kind"], c["component"]) for c in changes if c["run"] == newest["uuid"]}
    assert ("added", f"disk:REPLACED-{machine.name}") in kinds, kinds
    assert any(kind == "removed" for kind, _c in kinds), kinds
    time.sleep(3)  # three more polls: nothing recorded twice
    assert len(history(client, uuid)) == 2


def test_what_ironic_finished_while_the_service_was_down(
    inspector: InspectorServer, lab_module: Lab
) -> None:
    client = Client(inspector.url)
    (m1, before), (m2, during) = lab_module.machines(2)
    ironic_agent.inspect(lab_module.api, before, m1.payload())
    recorded(client, before, 1)

    assert inspector.stop() == 0, inspector.log_tail()
    try:
        ironic_agent.inspect(lab_module.api, during, m2.payload())
        ironic_agent.inspect(lab_module.api, before, replaced_disk(m1))
    finally:
        inspector.start()

    assert len(recorded(client, during, 1)) == 1
    assert len(recorded(client, before, 2)) == 2
    time.sleep(2)
    assert len(history(client, before)) == 2 and len(history(client, during)) == 1


# Ironic's own redfish inspection, of sushy-tools' emulated BMC


@pytest.fixture(scope="module")
def emulated() -> EmulatedMachine:
    macs = [f"52:54:02:47:00:{n:02x}" for n in (1, 2)]
    name = f"follow-redfish-{random.randrange(10**6)}"
    return EmulatedMachine(
        name, str(uuidlib.uuid4()), macs, cpus=4, memory_gib=8, disk_gib=40
    )


@pytest.fixture(scope="module")
def emulator(
    emulated: EmulatedMachine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RedfishEmulator]:
    server = RedfishEmulator(tmp_path_factory.mktemp("redfish-follow"), [emulated])
    server.start()
    yield server
    server.stop()


def test_redfish_inspection_is_followed(
    inspector: InspectorServer,
    lab_module: Lab,
    emulator: RedfishEmulator,
    emulated: EmulatedMachine,
) -> None:
    client = Client(inspector.url)
    bmc = MachineBmc(
        emulated.name,
        emulator.url,
        emulator.system_id(emulated),
        USERNAME,
        PASSWORD,
    )
    uuid = ironic_redfish_node(lab_module.api, emulated.name, bmc)
    api = lab_module.api
    api.request("PUT", f"/v1/nodes/{uuid}/states/provision", json={"target": "inspect"})
    node = wait_until(
        lambda: api.node(uuid),
        90,
        f"{uuid} to end Ironic's redfish inspection",
        until=lambda n: n["provision_state"] in ("manageable", "inspect failed"),
        interval=0.2,
    )
    assert node["provision_state"] == "manageable", node["last_error"]

    [run] = recorded(client, uuid, 1)

    assert (run["source"], run["interface"]) == ("ironic", "redfish")
    nodes = client.get("/v1/inventory?memory_mb=8192").json()
    assert uuid in {n["uuid"] for n in nodes["nodes"]}, nodes


# notifications: a second Ironic that notifies over a real RabbitMQ


@pytest.fixture(scope="module")
def rabbit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RabbitMQServer]:
    server = RabbitMQServer(tmp_path_factory.mktemp("rabbit-follow"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def notifying_ironic(
    rabbit: RabbitMQServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[IronicServer]:
    server = IronicServer(
        default_cache_dir(),
        tmp_path_factory.mktemp("ironic-notifying"),
        extra_config={
            "DEFAULT": {"notification_level": "info"},
            "oslo_messaging_notifications": {
                "driver": "messagingv2",
                "transport_url": rabbit.url,
            },
        },
    )
    server.start()
    yield server
    server.stop()


def test_notifications_record_within_seconds(
    notifying_ironic: IronicServer,
    rabbit: RabbitMQServer,
    tmp_path: pathlib.Path,
) -> None:
    inspector = start_inspector(
        tmp_path,
        notifying_ironic,
        options={
            "ironic_follow": {
                "enabled": "True",
                "notifications": "True",
                # the poll alone would take ten minutes
                "poll_interval": "600",
            },
            "oslo_messaging_notifications": {"transport_url": rabbit.url},
        },
    )
    try:
        client = Client(inspector.url)
        lab = Lab(IronicAPI(notifying_ironic.url), seed=48)
        machine, uuid = lab.machine()
        wait_until(
            lambda: inspector.log_file.read_text(),
            30,
            "the first poll and the listener",
            until=lambda text: "by its notifications too" in text,
        )
        time.sleep(1)  # the first (whole) poll has ended
        ironic_agent.inspect(lab.api, uuid, machine.payload())
        ended = time.monotonic()
        [run] = recorded(client, uuid, 1, timeout=10)
        took = time.monotonic() - ended
        print(f"recorded {took:.2f} s after Ironic's inspection ended")
        assert took < 5, took
        assert run["source"] == "ironic"
        text = client.get("/metrics").text
        assert metric(text, "ironic_inspector_follow_runs_total", way="notification")
        assert not metric(text, "ironic_inspector_follow_runs_total", way="poll")
    finally:
        assert inspector.stop() == 0, inspector.log_tail()
