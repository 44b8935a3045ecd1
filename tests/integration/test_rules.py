"""Introspection rules against a real Ironic: the result is read back from it."""

import copy
import json
import pathlib
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from lab.inspector_server import InspectorServer
from lab.ironic_server import IronicServer
from lab.waiting import wait_until
from tests.integration.conftest import Client, Lab, introspect, start_inspector

GiB = 1024**3


@pytest.fixture(scope="module")
def inspector(
    ironic: IronicServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[InspectorServer]:
    server = start_inspector(tmp_path_factory.mktemp("inspector-rules"), ironic)
    yield server
    assert server.stop() == 0, server.log_tail()


@pytest.fixture
def client(inspector: InspectorServer) -> Iterator[Client]:
    client = Client(inspector.url)
    client.http.delete(client.url + "/v1/rules")
    yield client
    client.http.delete(client.url + "/v1/rules")


def _rule(client: Client, body: dict[str, Any]) -> None:
    resp = client.post("/v1/rules", json=body)
    assert resp.status_code == 201, resp.text


def test_each_action_lands_in_ironic(client: Client, lab: Lab) -> None:
    machine, uuid = lab.machine()
    lab.api.request("PUT", f"/v1/nodes/{uuid}/traits/CUSTOM_STALE")
    lab.api.request(
        "PATCH",
        f"/v1/nodes/{uuid}",
        json=[
            {"op": "add", "path": "/properties/inspection_scope", "value": "rack-7"},
            {"op": "add", "path": "/extra/tags", "value": ["old"]},
        ],
    )
    _rule(
        client,
        {
            "description": "every action",
            "scope": "rack-7",
            "conditions": [
                {"op": "ge", "field": "inventory.cpu.count", "value": 1},
                {"op": "is-empty", "field": "error"},
                {
                    "op": "in-net",
                    "field": "inventory.interfaces[*].ipv4_address",
                    "value": "0.0.0.0/0",
                },
            ],
            "actions": [
                {
                    "action": "set-attribute",
                    "path": "/extra/cpus",
                    "value": "{data[inventory][cpu][count]}",
                },
                {
                    "action": "set-attribute",
                    "path": "/properties/vendor",
                    "value": "{data[inventory][system_vendor][manufacturer]}",
                },
                {"action": "extend-attribute", "path": "/extra/tags", "value": "rules"},
                {"action": "set-capability", "name": "inspected_by", "value": "rules"},
                {"action": "add-trait", "name": "CUSTOM_RULES"},
                {"action": "remove-trait", "name": "CUSTOM_STALE"},
            ],
        },
    )
    _rule(
        client,
        {
            "conditions": [{"op": "lt", "field": "memory_mb", "value": 1}],
            "actions": [{"action": "fail", "message": "must not fire"}],
        },
    )
    _rule(
        client,
        {
            "scope": "another-rack",
            "actions": [{"action": "fail", "message": "out of scope"}],
        },
    )
    (status,) = introspect(client, (machine, uuid))
    assert status["state"] == "finished", status
    node = lab.api.node(uuid)
    assert node["extra"]["cpus"] == str(machine.cpus)
    assert node["extra"]["tags"] == ["old", "rules"]
    vendor = machine.inventory["system_vendor"]["manufacturer"]
    assert node["properties"]["vendor"] == vendor
    assert "inspected_by:rules" in node["properties"]["capabilities"]
    assert "cpu_aes:true" in node["properties"]["capabilities"]  # hooks' kept
    assert node["traits"] == ["CUSTOM_RULES"]
    assert node["properties"]["cpus"] == machine.cpus


def test_matching_fail_rule_ends_in_error(client: Client, lab: Lab) -> None:
    machine, uuid = lab.machine()
    _rule(
        client,
        {
            "actions": [
                {"action": "set-attribute", "path": "/extra/seen", "value": True}
            ]
        },
    )
    _rule(
        client,
        {
            "conditions": [{"op": "gt", "field": "memory_mb", "value": 0}],
            "actions": [
                {"action": "fail", "message": "{data[memory_mb]} MiB is not enough"}
            ],
        },
    )
    (status,) = introspect(client, (machine, uuid))
    assert status["state"] == "error"
    assert status["error"] == f"{machine.memory_mb} MiB is not enough"
    node = lab.api.node(uuid)
    assert "seen" not in node["extra"]  # nothing written
    assert not node["properties"].get("cpus")


def test_root_device_hints_choose_the_disk(client: Client, lab: Lab) -> None:
    machine, uuid = lab.machine()
    largest = max(machine.inventory["disks"], key=lambda d: d["size"])
    lab.api.request(
        "PATCH",
        f"/v1/nodes/{uuid}",
        json=[
            {
                "op": "add",
                "path": "/properties/root_device",
                "value": {"size": largest["size"] // GiB},
            }
        ],
    )
    (status,) = introspect(client, (machine, uuid))
    assert status["state"] == "finished", status
    assert lab.api.node(uuid)["properties"]["local_gb"] == largest["size"] // GiB - 1
    data = client.get(f"/v1/introspection/{uuid}/data").json()
    assert data["root_disk"]["name"] == largest["name"]


def test_removing_a_trait_the_node_lacks_is_a_no_op(client: Client, lab: Lab) -> None:
    """Ironic answers 404 for a trait the node does not have (the SDK only
    ignores a 400): the rule's action changes nothing and processing ends."""
    machine, uuid = lab.machine()
    lab.api.request(
        "PATCH",
        f"/v1/nodes/{uuid}",
        json=[{"op": "add", "path": "/properties/inspection_scope", "value": "bare"}],
    )
    _rule(
        client,
        {
            "scope": "bare",
            "actions": [{"action": "remove-trait", "name": "CUSTOM_NEVER_SET"}],
        },
    )
    (status,) = introspect(client, (machine, uuid))
    assert status["state"] == "finished", status
    assert lab.api.node(uuid)["traits"] == []


def test_a_machine_without_a_4_gib_disk_is_diskless(client: Client, lab: Lab) -> None:
    """As ironic-inspector: no disk can hold an image, the ramdisk sends no
    root_disk, and the node finishes with local_gb 0."""
    machine, uuid = lab.machine()
    payload = copy.deepcopy(machine.payload())
    payload["inventory"]["disks"] = [
        {"name": "/dev/sda", "size": 2 * GiB, "rotational": False},
        {"name": "/dev/sdb", "size": 512 * 1024**2, "rotational": True},
    ]
    payload.pop("root_disk", None)
    (status,) = introspect(client, (machine, uuid), payload=payload)
    assert status["state"] == "finished", status
    assert lab.api.node(uuid)["properties"]["local_gb"] == 0


def test_reapply_with_a_new_body_changes_ironic(client: Client, lab: Lab) -> None:
    machine, uuid = lab.machine()
    (status,) = introspect(client, (machine, uuid))
    assert status["state"] == "finished", status
    _rule(
        client,
        {
            "actions": [
                {
                    "action": "set-attribute",
                    "path": "/extra/memory",
                    "value": "{data[inventory][memory][physical_mb]}",
                }
            ]
        },
    )
    changed = copy.deepcopy(machine.payload())
    changed["inventory"]["cpu"]["count"] = machine.cpus * 2
    changed["inventory"]["memory"]["physical_mb"] = 4096
    resp = client.post(f"/v1/introspection/{uuid}/data/unprocessed", json=changed)
    assert resp.status_code == 202, resp.text
    client.wait_for(uuid, "reapplying", "finished")
    assert client.wait_for(uuid, "finished", "error")["state"] == "finished"
    node = lab.api.node(uuid)
    assert node["properties"]["cpus"] == machine.cpus * 2
    assert node["properties"]["memory_mb"] == 4096
    assert node["extra"]["memory"] == "4096"
    raw = client.get(f"/v1/introspection/{uuid}/data/unprocessed").json()
    assert raw["inventory"]["cpu"]["count"] == machine.cpus * 2


def test_the_1_24_language_lands_in_ironic(client: Client, lab: Lab) -> None:
    """Priority, a loop over the node's ports, variables keeping their
    types: what the rules record is what Ironic takes."""
    machine, uuid = lab.machine(enroll_port=True)
    _rule(
        client,
        {
            "priority": 1,
            "conditions": [
                {"op": "eq", "field": "node://extra.stage", "value": "first"},
                {"op": "!is-empty", "field": "{inventory[interfaces]}"},
            ],
            "actions": [
                {"action": "set-attribute", "path": "/extra/stage", "value": "second"}
            ],
        },
    )
    _rule(
        client,
        {
            "priority": 100,
            "conditions": [
                {
                    "op": "gt",
                    "field": "{inventory[memory][physical_mb]}",
                    "value": 1,
                }
            ],
            "actions": [
                {"action": "set-attribute", "path": "/extra/stage", "value": "first"},
                {
                    "action": "set-attribute",
                    "path": "/extra/memory_mb",
                    "value": "{inventory[memory][physical_mb]}",
                },
                {
                    "action": "set-port-attribute",
                    "port_id": "{item[uuid]}",
                    "path": "/extra/switch",
                    "value": "sw-{node[name]}",
                    "loop": "{ports}",
                },
            ],
        },
    )
    (status,) = introspect(client, (machine, uuid))
    assert status["state"] == "finished", status
    node = lab.api.node(uuid)
    assert node["extra"]["stage"] == "second"
    memory = machine.inventory["memory"]["physical_mb"]
    assert node["extra"]["memory_mb"] == memory  # a number, not "16384"
    ports = lab.api.ports(uuid)
    assert ports and all(p["extra"]["switch"] == f"sw-{node['name']}" for p in ports)


# ---- the same rules in Ironic's own inspection and in ours (issue 34) ----

IRONIC_RULES = {"X-OpenStack-Ironic-API-Version": "1.96"}
"""Ironic's inspection rules API (and /v1/continue_inspection) version."""
MANAGE = pathlib.Path(sys.executable).parent / "ironic-inspector-manage"


def _manage(inspector: InspectorServer, *args: str) -> str:
    done = subprocess.run(
        [str(MANAGE), "--config-file", str(inspector.config_file), "rules", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _port_rule(node: str, port: str, switch: str) -> dict[str, Any]:
    """Port attributes: Ironic names a port by UUID, so one rule per node,
    each gated on its node (both sides run both rules)."""
    return {
        "description": f"ports of {node}",
        "priority": 10,
        "conditions": [{"op": "eq", "field": "node://uuid", "value": node}],
        "actions": [
            {
                "action": "set-port-attribute",
                "port_id": port,
                "path": "/extra/switch",
                "value": switch,
            },
            {
                "action": "set-port-attribute",
                "port_id": port,
                "path": "/physical_network",
                "value": "fabric-a",
            },
        ],
    }


def _compared_rules(a: str, port_a: str, b: str, port_b: str) -> list[dict[str, Any]]:
    vendor = "{inventory[system_vendor][manufacturer]}"
    return [
        {
            "description": "runs first",
            "priority": 100,
            "actions": [
                {"action": "extend-attribute", "path": "/extra/order", "value": "p100"},
                {"action": "set-attribute", "path": "/extra/vendor", "value": vendor},
            ],
        },
        {
            "description": "negated condition",
            "priority": 50,
            "conditions": [
                {
                    "op": "!eq",
                    "field": "inventory.system_vendor.manufacturer",
                    "value": "NoSuchVendor",
                }
            ],
            "actions": [
                {"action": "add-trait", "name": "CUSTOM_RULES_NEGATED"},
                {"action": "set-capability", "name": "rules", "value": "yes"},
            ],
        },
        {
            "description": "never matches",
            "conditions": [
                {
                    "op": "eq",
                    "field": "inventory.system_vendor.manufacturer",
                    "value": "NoSuchVendor",
                }
            ],
            "actions": [{"action": "add-trait", "name": "CUSTOM_NEVER"}],
        },
        {
            "description": "variables",
            "priority": 10,
            "actions": [
                {
                    "action": "set-attribute",
                    "path": "/properties/vendor_name",
                    "value": "{inventory[system_vendor][product_name]}",
                },
                {
                    "action": "set-capability",
                    "name": "arch",
                    "value": "{inventory[cpu][architecture]}",
                },
            ],
        },
        {
            "description": "runs last, loops",
            "priority": 0,
            "actions": [
                {"action": "extend-attribute", "path": "/extra/order", "value": "p0"},
                {
                    "action": "extend-attribute",
                    "path": "/extra/nics",
                    "value": "{item}",
                    "loop": ["eth0", "eth1"],
                },
            ],
        },
        _port_rule(a, port_a, "switch-a"),
        _port_rule(b, port_b, "switch-b"),
    ]


def _capabilities(node: dict[str, Any]) -> dict[str, str]:
    text = node["properties"].get("capabilities") or ""
    return dict(item.split(":", 1) for item in text.split(",") if ":" in item)


def _outcome(api: Any, uuid: str) -> dict[str, Any]:
    node = api.node(uuid)
    port = api.request("GET", f"/v1/ports?node_uuid={uuid}&detail=true")["ports"][0]
    caps = _capabilities(node)
    return {
        "extra": node["extra"],
        "vendor_name": node["properties"].get("vendor_name"),
        "capabilities": {k: caps.get(k) for k in ("rules", "arch")},
        "traits": sorted(api.request("GET", f"/v1/nodes/{uuid}/traits")["traits"]),
        "port": {"extra": port["extra"], "physical_network": port["physical_network"]},
    }


def _ironic_inspects(api: Any, uuid: str, payload: dict[str, Any]) -> None:
    """Ironic's own agent inspection, the test as the ramdisk."""
    api.request(
        "PATCH",
        f"/v1/nodes/{uuid}",
        json=[{"op": "replace", "path": "/inspect_interface", "value": "agent"}],
    )
    api.request("PUT", f"/v1/nodes/{uuid}/states/provision", json={"target": "inspect"})
    wait_until(
        lambda: api.node(uuid)["provision_state"],
        60,
        f"{uuid} to wait in Ironic's inspect wait",
        until=lambda state: state == "inspect wait",
        interval=0.2,
    )
    api.request("POST", "/v1/continue_inspection", json=payload, headers=IRONIC_RULES)
    node = wait_until(
        lambda: api.node(uuid),
        60,
        f"{uuid} to end Ironic's inspection",
        until=lambda n: n["provision_state"] in ("manageable", "inspect failed"),
        interval=0.2,
    )
    assert node["provision_state"] == "manageable", node["last_error"]


def test_same_rules_same_node_as_ironic_inspection(
    inspector: InspectorServer, client: Client, lab: Lab, tmp_path: pathlib.Path
) -> None:
    (machine_a, a), (machine_b, b) = lab.machine(True), lab.machine(True)
    ports = {
        uuid: lab.api.request("GET", f"/v1/ports?node_uuid={uuid}")["ports"][0]["uuid"]
        for uuid in (a, b)
    }
    for rule in _compared_rules(a, ports[a], b, ports[b]):
        resp = client.post("/v1/rules", json=rule)
        assert resp.status_code == 201, resp.text
    # ours -> Ironic: the export, posted to Ironic's API as it is
    exported = tmp_path / "ironic-rules.json"
    _manage(inspector, "export", "--format", "ironic", "--output", str(exported))
    created = []
    try:
        for rule in json.loads(exported.read_text()):
            lab.api.request(
                "POST", "/v1/inspection_rules", json=rule, headers=IRONIC_RULES
            )
            created.append(rule["uuid"])
        # Ironic -> ours: its API's answer, imported in place of our own rules
        answer = lab.api.request(
            "GET", "/v1/inspection_rules?detail=true", headers=IRONIC_RULES
        )
        assert sorted(r["uuid"] for r in answer["inspection_rules"]) == sorted(created)
        from_ironic = tmp_path / "from-ironic.json"
        from_ironic.write_text(json.dumps(answer))
        client.http.delete(client.url + "/v1/rules")
        imported = _manage(inspector, "import", "--format", "ironic", str(from_ironic))
        assert f"Imported {len(created)} rules" in imported
        # one ramdisk payload: A's hardware, with B's addresses for B
        payload_a = machine_a.payload()
        payload_b = copy.deepcopy(payload_a)
        payload_b["inventory"]["interfaces"] = machine_b.inventory["interfaces"]
        payload_b["inventory"]["bmc_address"] = machine_b.inventory["bmc_address"]
        payload_b["boot_interface"] = machine_b.payload()["boot_interface"]
        _ironic_inspects(lab.api, a, payload_a)
        (status,) = introspect(client, (machine_b, b), payload=payload_b)
        assert status["state"] == "finished", status
    finally:
        for uuid in created:
            lab.api.request(
                "DELETE", f"/v1/inspection_rules/{uuid}", headers=IRONIC_RULES
            )
    ironic_side, ours = _outcome(lab.api, a), _outcome(lab.api, b)
    assert ironic_side["port"]["extra"] == {"switch": "switch-a"}
    assert ours["port"]["extra"] == {"switch": "switch-b"}
    ironic_side["port"]["extra"] = ours["port"]["extra"] = "per node"
    assert ironic_side == ours
    assert ours["extra"]["order"] == ["p100", "p0"]  # priority order
    assert ours["extra"]["nics"] == ["eth0", "eth1"]  # the loop
    assert ours["traits"] == ["CUSTOM_RULES_NEGATED"]  # not CUSTOM_NEVER
    assert ours["capabilities"]["rules"] == "yes" and ours["vendor_name"]
