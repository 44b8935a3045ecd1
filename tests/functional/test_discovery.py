"""Discovery: data from a machine nobody is introspecting creates its node."""

import random
from typing import Any

from oslo_config import cfg

from inspector import states
from tests.functional.conftest import Service, random_bmc, random_mac


def test_unknown_machine_is_404_without_the_hook(
    service: Service, payload: Any
) -> None:
    resp = service.client.post("/v1/continue", json=payload(random_mac(), random_bmc()))
    assert resp.status_code == 404
    assert "Could not find a node" in resp.get_json()["error"]["message"]
    assert not [c for c in service.ironic.calls if c[0] == "create_node"]


def test_enroll_creates_and_processes_the_node(
    service: Service, conf: cfg.ConfigOpts, payload: Any
) -> None:
    conf.set_override("node_not_found_hook", "enroll", group="processing")
    conf.set_override("enroll_node_driver", "ipmi", group="discovery")
    conf.set_override(
        "enroll_node_fields", {"resource_class": "discovered"}, group="discovery"
    )
    service.client.post(
        "/v1/rules",
        json={
            "conditions": [{"op": "eq", "field": "auto_discovered", "value": True}],
            "actions": [
                {
                    "action": "set-attribute",
                    "path": "/name",
                    "value": "disc-{data[inventory][system_vendor][serial_number]}",
                }
            ],
        },
    )
    bmc, mac = random_bmc(), random_mac()
    data = payload(mac, bmc)
    data["inventory"]["system_vendor"]["serial_number"] = f"SN{random.randrange(10**6)}"
    resp = service.client.post("/v1/continue", json=data)
    assert resp.status_code == 200, resp.get_json()
    uuid = resp.get_json()["uuid"]
    status = service.wait_for(uuid, *states.FINAL)
    assert status["state"] == states.FINISHED, status
    node = service.ironic.nodes[uuid]
    assert node["driver"] == "ipmi"
    assert node["driver_info"] == {"ipmi_address": bmc}
    assert node["resource_class"] == "discovered"
    assert node["name"] == f"disc-{data['inventory']['system_vendor']['serial_number']}"
    assert node["properties"]["cpus"] == data["inventory"]["cpu"]["count"]
    assert [p["address"] for p in service.ironic.node_ports(uuid)] == [mac]
    stored = service.client.get(f"/v1/introspection/{uuid}/data").get_json()
    assert stored["auto_discovered"] is True
    assert node["power_state"] == "power off"  # nobody powered it: left alone
    # the same machine again: Ironic knows its BMC now
    again = service.client.post("/v1/continue", json=data)
    assert again.status_code == 409
    assert uuid in again.get_json()["error"]["message"]
    service.client.delete("/v1/rules")


def test_enroll_refuses_a_known_mac(
    service: Service, conf: cfg.ConfigOpts, payload: Any
) -> None:
    conf.set_override("node_not_found_hook", "enroll", group="processing")
    mac = random_mac()
    service.ironic.add_node(name=f"n-{random.randrange(10**9)}", macs=(mac,))
    resp = service.client.post("/v1/continue", json=payload(mac, random_bmc()))
    assert resp.status_code == 409
    assert f"MAC {mac}" in resp.get_json()["error"]["message"]


def test_enroll_needs_an_address(service: Service, conf: cfg.ConfigOpts) -> None:
    conf.set_override("node_not_found_hook", "enroll", group="processing")
    resp = service.client.post("/v1/continue", json={"inventory": {"interfaces": []}})
    assert resp.status_code == 404
    assert "no MAC or BMC address" in resp.get_json()["error"]["message"]
    assert not [c for c in service.ironic.calls if c[0] == "create_node"]


def _enroll_dual_stack(
    service: Service, conf: cfg.ConfigOpts, payload: Any, versions: list[str]
) -> dict[str, Any]:
    conf.set_override("node_not_found_hook", "enroll", group="processing")
    conf.set_override("enabled_bmc_address_version", versions, group="discovery")
    v4 = random_bmc()
    v6 = f"fd00::{random.randrange(1, 0xFFFF):x}"
    data = payload(random_mac(), v4)
    data["inventory"]["bmc_v6address"] = v6
    resp = service.client.post("/v1/continue", json=data)
    assert resp.status_code == 200, resp.get_json()
    node: dict[str, Any] = service.ironic.nodes[resp.get_json()["uuid"]]
    node["_v4"], node["_v6"] = v4, v6
    return node


def test_enroll_prefers_the_bmc_address_version_configured(
    service: Service, conf: cfg.ConfigOpts, payload: Any
) -> None:
    # [discovery]enabled_bmc_address_version as in ironic-inspector: 4,6
    # by default (IPv4 wins), 6,4 prefers IPv6
    node = _enroll_dual_stack(service, conf, payload, ["4", "6"])
    assert node["driver_info"] == {"ipmi_address": node["_v4"]}
    node = _enroll_dual_stack(service, conf, payload, ["6", "4"])
    assert node["driver_info"] == {"ipmi_address": node["_v6"]}


def test_enroll_ipv6_only_when_4_alone_gets_no_bmc(
    service: Service, conf: cfg.ConfigOpts, payload: Any
) -> None:
    conf.set_override("node_not_found_hook", "enroll", group="processing")
    conf.set_override("enabled_bmc_address_version", ["4"], group="discovery")
    data = payload(random_mac(), None)
    data["inventory"]["bmc_v6address"] = "fd00::99"
    resp = service.client.post("/v1/continue", json=data)
    assert resp.status_code == 200, resp.get_json()
    node = service.ironic.nodes[resp.get_json()["uuid"]]
    assert "driver_info" not in node or not node["driver_info"]
