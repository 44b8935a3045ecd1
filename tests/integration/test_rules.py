"""Introspection rules against a real Ironic: the result is read back from it."""

import copy
from typing import Any

from tests.integration.conftest import (
    Client,
    Lab,
    introspect,
    module_inspector,
    rules_client,
)

GiB = 1024**3


inspector = module_inspector("inspector-rules")
client = rules_client


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
