"""Out-of-band and auto introspection (API 1.26) over HTTP, against a
static Redfish BMC on loopback and the fake Ironic."""

import json
from collections.abc import Iterator
from typing import Any

import pytest

from inspector import states
from inspector.db import introspections
from lab.machines.redfish_static import StaticBmc, StaticSystem
from lab.servers import loopback
from tests.functional.conftest import (
    Service,
    add_node,
    build_payload,
    random_bmc,
    random_mac,
)

V = "X-OpenStack-Ironic-Inspector-API-Version"
NEW = {V: "1.26"}


@pytest.fixture(scope="module")
def bmc() -> Iterator[StaticBmc]:
    macs = [random_mac() for _ in range(4)]
    with StaticBmc(
        [
            StaticSystem("full", macs[:2]),
            StaticSystem(
                "quirky", macs[2:3], memory_gib=0.5, drives_gib=[], mac_less_nic=True
            ),
            StaticSystem("broken", macs[3:], html=True),
        ]
    ) as server:
        yield server


def _redfish_node(
    service: Service, bmc: StaticBmc, system: str, password: str = "password"
) -> dict[str, Any]:
    # the system's MACs may be another node's ports since an earlier test
    for port in list(service.ironic.ports.values()):
        if (
            port["address"]
            in bmc.systems[system if system in bmc.systems else "full"].macs
        ):
            service.ironic.delete_port(port["uuid"])
    node = add_node(service)
    node["driver_info"].update(
        redfish_address=bmc.url,
        redfish_system_id=f"/redfish/v1/Systems/{system}",
        redfish_username="admin",
        redfish_password=password,
    )
    return node


def _calls(service: Service, uuid: str) -> list[str]:
    return [call for call, target in service.ironic.calls if target == uuid]


def _start(service: Service, uuid: str, mode: str, version: str = "1.26") -> Any:
    return service.client.post(
        f"/v1/introspection/{uuid}?mode={mode}", headers={V: version}
    )


def _finish_out_of_band(service: Service, uuid: str) -> None:
    """Start ``uuid`` out of band (202) and wait for it to finish."""
    resp = _start(service, uuid, "out-of-band")
    assert resp.status_code == 202, resp.get_json()
    status = service.wait_for(uuid, *states.FINAL)
    assert status["state"] == states.FINISHED, status


def test_out_of_band_never_boots(service: Service, bmc: StaticBmc) -> None:
    node = _redfish_node(service, bmc, "full")
    uuid = node["uuid"]
    _finish_out_of_band(service, uuid)
    calls = _calls(service, uuid)
    assert "set_power_state" not in calls
    assert "set_boot_device" not in calls
    # the ports came first, before any processing write
    assert calls.index("create_port") < calls.index("patch_node")
    ports = service.ironic.node_ports(uuid)
    assert sorted(p["address"] for p in ports) == sorted(bmc.systems["full"].macs)
    assert all(p["pxe_enabled"] is False for p in ports)
    props = service.ironic.nodes[uuid]["properties"]
    assert (props["cpus"], props["memory_mb"], props["local_gb"]) == (8, 32768, 479)
    assert props["cpu_arch"] == "x86_64"
    data = service.client.get(f"/v1/introspection/{uuid}/data").get_json()
    assert set(data["provenance"].values()) == {"redfish"}
    assert data["redfish"]["bmc"] == bmc.url
    record = service.client.get(f"/v1/introspection/{uuid}", headers=NEW).get_json()
    assert record["error"] is None
    assert record["mode"] == "out-of-band"


def test_out_of_band_with_every_nic_a_port(service: Service, bmc: StaticBmc) -> None:
    """The ports the start created are known to the hooks (add_ports = all
    would otherwise create them again: a conflict)."""
    service.rt.conf.set_override("add_ports", "all", "processing")
    node = _redfish_node(service, bmc, "full")
    uuid = node["uuid"]
    assert _start(service, uuid, "out-of-band").status_code == 202
    status = service.wait_for(uuid, *states.FINAL)
    assert status["error"] is None, status
    assert _calls(service, uuid).count("create_port") == 2


def test_mode_needs_1_26(service: Service, bmc: StaticBmc) -> None:
    node = _redfish_node(service, bmc, "full")
    resp = _start(service, node["uuid"], "out-of-band", version="1.25")
    assert resp.status_code == 400
    assert (
        "mode parameter needs API version 1.26" in resp.get_json()["error"]["message"]
    )
    resp = _start(service, node["uuid"], "sideways")
    assert resp.status_code == 400
    message = resp.get_json()["error"]["message"]
    assert "Invalid value for mode" in message and "out-of-band" in message


def test_out_of_band_without_redfish_is_400(service: Service) -> None:
    node = add_node(service)
    resp = _start(service, node["uuid"], "out-of-band")
    assert resp.status_code == 400
    assert "redfish_address" in resp.get_json()["error"]["message"]
    assert service.client.get(f"/v1/introspection/{node['uuid']}").status_code == 404


def test_masked_password_is_400(service: Service, bmc: StaticBmc) -> None:
    node = _redfish_node(service, bmc, "full", password="******")
    for mode in ("out-of-band", "auto"):
        resp = _start(service, node["uuid"], mode)
        assert resp.status_code == 400
        message = resp.get_json()["error"]["message"]
        assert message.startswith(
            f"Ironic hides the Redfish password of node {node['uuid']} from "
            "this service"
        )
        assert '"show_password": "role:service"' in message


@pytest.mark.parametrize(
    "system,password,cause",
    [
        ("full", "wrong", "refused the credentials"),
        ("broken", "password", "not Redfish JSON"),
        ("nope", "password", "not found"),
    ],
)
def test_bmc_errors_end_in_error(
    service: Service, bmc: StaticBmc, system: str, password: str, cause: str
) -> None:
    service.rt.conf.set_override("retries", 0, "redfish")
    node = _redfish_node(service, bmc, system, password=password)
    uuid = node["uuid"]
    assert _start(service, uuid, "out-of-band").status_code == 202
    status = service.wait_for(uuid, *states.FINAL)
    assert status["state"] == states.ERROR
    assert bmc.url in status["error"] and cause in status["error"]
    calls = _calls(service, uuid)
    for write in ("set_power_state", "set_boot_device", "create_port", "patch_node"):
        assert write not in calls
    assert service.ironic.node_ports(uuid) == []


def test_auto_without_redfish_goes_in_band(service: Service) -> None:
    node = add_node(service)
    uuid = node["uuid"]
    assert _start(service, uuid, "auto").status_code == 202
    service.wait_for(uuid, states.WAITING)
    assert "set_power_state" in _calls(service, uuid)


def test_auto_falls_back_and_merges(service: Service, bmc: StaticBmc) -> None:
    node = _redfish_node(service, bmc, "quirky")
    node["driver_info"]["ipmi_address"] = bmc_ip = random_bmc()
    uuid = node["uuid"]
    assert _start(service, uuid, "auto").status_code == 202
    service.wait_for(uuid, states.WAITING)  # booting the ramdisk
    assert "set_power_state" in _calls(service, uuid)
    post = build_payload(random_mac(), bmc_ip)
    post["inventory"].pop("system_vendor", None)
    resp = service.client.post("/v1/continue", json=post)
    assert resp.status_code == 200, resp.get_json()
    status = service.wait_for(uuid, *states.FINAL)
    assert status["state"] == states.FINISHED, status
    record = service.client.get(f"/v1/introspection/{uuid}", headers=NEW).get_json()
    assert record["mode"] == "in-band"  # the fallback's
    data = service.client.get(f"/v1/introspection/{uuid}/data").get_json()
    provenance = data["provenance"]
    assert provenance["memory"] == "ramdisk"
    assert provenance["system_vendor"] == "redfish"  # the ramdisk had none
    assert data["inventory"]["system_vendor"]["manufacturer"] == "Contoso"
    facts = {d["fact"] for d in data["disagreements"]}
    assert "memory" in facts and "interfaces" in facts
    assert "memory_mb (512 MiB is implausibly small)" in data["redfish"]["lacking"]


# [redfish]engine = ironic: Ironic's own redfish inspection asks the BMC


def _ironic_node(
    service: Service, inventory: dict[str, Any] | None = None, **fields: Any
) -> dict[str, Any]:
    service.rt.conf.set_override("engine", "ironic", "redfish")
    node = add_node(service)
    node["inspect_interface"] = "redfish"
    node["driver_info"].update(
        redfish_address="https://bmc.example",
        redfish_username="admin",
        redfish_password="******",  # the password never leaves Ironic
    )
    node["_inspection"] = {"inventory": inventory} if inventory else {}
    node.update(fields)
    return node


def _inventory(*macs: str) -> dict[str, Any]:
    """What Ironic 39's redfish inspection stores (name, MAC, speed per NIC)."""
    return {
        "cpu": {"count": 4, "architecture": "x86_64"},
        "memory": {"physical_mb": 16384},
        "disks": [{"name": "d0", "size": 100 * 1024**3}],
        "interfaces": [
            {"name": f"nic{i}", "mac_address": mac, "speed_mbps": 1000}
            for i, mac in enumerate(macs)
        ],
        "system_vendor": {"manufacturer": "Contoso"},
    }


def test_ironic_engine_out_of_band(service: Service) -> None:
    macs = (random_mac(), random_mac())
    node = _ironic_node(service, _inventory(*macs))
    uuid = node["uuid"]
    _finish_out_of_band(service, uuid)
    calls = _calls(service, uuid)
    assert "set_provision_state inspect" in calls and "get_inventory" in calls
    assert "set_power_state" not in calls and "set_boot_device" not in calls
    # Ironic made the ports: none twice, none by us
    assert "create_port" not in calls
    ports = service.ironic.node_ports(uuid)
    assert sorted(p["address"] for p in ports) == sorted(macs)
    props = service.ironic.nodes[uuid]["properties"]
    assert (props["memory_mb"], props["local_gb"]) == (16384, 99)
    data = service.client.get(f"/v1/introspection/{uuid}/data").get_json()
    assert set(data["provenance"].values()) == {"redfish"}
    assert data["redfish"]["engine"] == "ironic"
    record = service.client.get(f"/v1/introspection/{uuid}", headers=NEW).get_json()
    assert record["mode"] == "out-of-band"


def test_ironic_engine_upper_case_bmc_macs(service: Service) -> None:
    """A BMC that reports AA:BB:...: Ironic's inventory keeps the case, its
    ports are lower case; ours must see the ports it already has (a second
    create would be Ironic's 409 and a failed run)."""
    macs = (random_mac().upper(), random_mac().upper())
    node = _ironic_node(service, _inventory(*macs))
    uuid = node["uuid"]
    _finish_out_of_band(service, uuid)
    assert "create_port" not in _calls(service, uuid)
    ports = service.ironic.node_ports(uuid)
    expected = sorted(m.lower() for m in macs)
    assert sorted(p["address"] for p in ports) == expected
    data = service.client.get(f"/v1/introspection/{uuid}/data").get_json()
    found = sorted(nic["mac_address"] for nic in data["inventory"]["interfaces"])
    assert found == expected


def test_ironic_engine_refusals(service: Service) -> None:
    node = _ironic_node(service, inspect_interface="inspector")
    resp = _start(service, node["uuid"], "out-of-band")
    assert resp.status_code == 400
    message = resp.get_json()["error"]["message"]
    assert "inspect_interface 'inspector'" in message
    assert f"baremetal node set --inspect-interface redfish {node['uuid']}" in message
    node = _ironic_node(service, provision_state="enroll")
    resp = _start(service, node["uuid"], "out-of-band")
    assert resp.status_code == 400
    message = resp.get_json()["error"]["message"]
    assert "'enroll'" in message and "baremetal node manage" in message
    assert service.client.get(f"/v1/introspection/{node['uuid']}").status_code == 404


def test_ironic_engine_auto_on_a_node_ironic_cannot_inspect(service: Service) -> None:
    node = _ironic_node(service, inspect_interface="inspector")
    uuid = node["uuid"]
    assert _start(service, uuid, "auto").status_code == 202
    service.wait_for(uuid, states.WAITING)
    calls = _calls(service, uuid)
    assert "set_power_state" in calls and "set_provision_state inspect" not in calls


def test_ironic_engine_failure(service: Service) -> None:
    node = _ironic_node(service, _inspection={"last_error": "memory_mb missing"})
    uuid = node["uuid"]
    assert _start(service, uuid, "out-of-band").status_code == 202
    status = service.wait_for(uuid, *states.FINAL)
    assert status["state"] == states.ERROR
    assert "Ironic's inspection failed: memory_mb missing" in status["error"]
    assert "https://bmc.example" in status["error"]
    assert "set_power_state" not in _calls(service, uuid)
    # auto boots the ramdisk instead
    service.ironic.nodes[uuid]["provision_state"] = "inspect failed"
    assert _start(service, uuid, "auto").status_code == 202
    service.wait_for(uuid, states.WAITING)
    assert "set_power_state" in _calls(service, uuid)


def test_auto_with_an_unreachable_bmc_boots_the_ramdisk_at_once(
    service: Service,
) -> None:
    service.rt.conf.set_override("retries", 2, "redfish")
    service.rt.conf.set_override("retry_delay", 1.0, "redfish")
    node = add_node(service)
    node["driver_info"].update(
        redfish_address=f"http://127.0.0.1:{loopback.free_port()}",
        redfish_username="admin",
        redfish_password="password",
    )
    uuid = node["uuid"]
    assert _start(service, uuid, "auto").status_code == 202
    status = service.wait_for(uuid, states.WAITING, states.ERROR)
    assert status["state"] == states.WAITING, status
    assert "set_power_state" in _calls(service, uuid)
    record = introspections.get(service.rt.db, uuid)
    kept = json.loads(record.bmc_data or "{}")
    assert "could not be reached" in kept["redfish"]["error"]
    assert "cpus (the BMC could not be asked)" in kept["redfish"]["lacking"]
