"""Discovery and LLDP against the real Ironic: read back from Ironic itself."""

import random
from collections.abc import Iterator

import pytest

from lab.machines import lldp
from lab.machines.hardware import unknown_machine
from lab.servers.inspector import InspectorServer
from lab.servers.ironic import IronicServer
from tests.integration.conftest import Client, Lab, introspect, start_inspector

HOOKS = (
    "$default_processing_hooks,lldp_basic,local_link_connection,"
    "extra_hardware,raid_device,physnet_cidr_map,accelerators,numa_topology"
)


@pytest.fixture(scope="module")
def inspector(
    ironic: IronicServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[InspectorServer]:
    server = start_inspector(
        tmp_path_factory.mktemp("inspector-discovery"),
        ironic,
        options={
            "processing": {
                "node_not_found_hook": "enroll",
                "processing_hooks": HOOKS,
                "store_data": "database",
            },
            "port_physnet": {"cidr_map": "10.0.0.0/8:provisioning"},
            "discovery": {"enroll_node_fields": "resource_class:discovered"},
        },
    )
    yield server
    assert server.stop() == 0, server.log_tail()


@pytest.fixture
def client(inspector: InspectorServer) -> Client:
    return Client(inspector.url)


def _expected_link(interface: dict[str, object]) -> dict[str, str]:
    fields = lldp.decode(interface["lldp"])  # type: ignore[arg-type]
    return {
        "switch_id": str(fields["switch_chassis_id"]),
        "port_id": str(fields["switch_port_id"]),
        "switch_info": str(fields["switch_system_name"]),
    }


def test_discovery_enrolls_an_unknown_machine(client: Client, lab: Lab) -> None:
    machine = unknown_machine(seed=random.randrange(10**6))
    bmc = f"203.0.113.{random.randrange(1, 255)}"
    machine.inventory["bmc_address"] = bmc
    resp = client.post("/v1/continue", json=machine.payload())
    assert resp.status_code == 200, resp.text
    uuid = resp.json()["uuid"]
    status = client.wait_for(uuid, "finished", "error")
    assert status["state"] == "finished", status
    node = lab.api.node(uuid)
    assert node["driver"] == "fake-hardware"
    assert node["driver_info"]["ipmi_address"] == bmc
    assert node["resource_class"] == "discovered"
    assert node["provision_state"] == "enroll"
    assert node["properties"]["cpus"] == machine.cpus
    assert node["properties"]["memory_mb"] == machine.memory_mb
    ports = lab.api.ports(uuid)
    assert [p["address"] for p in ports] == [machine.pxe_mac]
    pxe = machine.inventory["interfaces"][0]
    assert ports[0]["local_link_connection"] == _expected_link(pxe)
    data = client.get(f"/v1/introspection/{uuid}/data").json()
    assert data["auto_discovered"] is True
    # posting again does not create a second node
    again = client.post("/v1/continue", json=machine.payload())
    assert again.status_code == 409, again.text
    assert uuid in again.json()["error"]["message"]


def test_lldp_lands_in_the_port(client: Client, lab: Lab) -> None:
    machine, uuid = lab.machine(enroll_port=True)
    (status,) = introspect(client, (machine, uuid))
    assert status["state"] == "finished", status
    (port,) = lab.api.ports(uuid)
    pxe = machine.inventory["interfaces"][0]
    assert port["local_link_connection"] == _expected_link(pxe)
    data = client.get(f"/v1/introspection/{uuid}/data").json()
    processed = data["all_interfaces"][pxe["name"]]["lldp_processed"]
    assert processed["switch_port_id"] == _expected_link(pxe)["port_id"]


def test_optional_hooks_land_in_ironic(client: Client, lab: Lab) -> None:
    machine, uuid = lab.machine(enroll_port=False)
    payload = machine.payload()
    payload["pci_devices"].append(
        {
            "vendor_id": "10de",
            "product_id": "2330",
            "class": "030200",
            "bus": "0000:c1:00.0",
        }
    )
    pxe = machine.inventory["interfaces"][0]["name"]
    payload["numa_topology"] = {
        "ram": [{"numa_node": 0, "size_kb": 8388608}],
        "cpus": [{"cpu": 0, "numa_node": 0, "thread_siblings": [0, 1]}],
        "nics": [{"name": pxe, "numa_node": 0}],
    }
    payload["data"] = [
        ["cpu", "logical", "number", str(machine.cpus)],
        ["system", "product", "vendor", "lab"],
    ]
    (status,) = introspect(client, (machine, uuid), payload=payload)
    assert status["state"] == "finished", status
    node = lab.api.node(uuid)
    gpus = len(machine.gpus) + 1
    assert node["properties"]["accel_count"] == gpus
    assert node["properties"]["numa_nodes"] == 1
    assert node["extra"]["block_devices"]["serials"]  # raid_device's first pass
    (port,) = lab.api.ports(uuid)
    assert port["physical_network"] == "provisioning"  # 10.x from cidr_map
    data = client.get(f"/v1/introspection/{uuid}/data").json()
    assert data["extra"]["cpu"]["logical"]["number"] == machine.cpus
    assert len(data["accel_devices"]) == gpus
    assert data["numa_nodes"][0]["nics"][0]["name"] == pxe
