"""The rules API over HTTP, and rules applied by a real introspection."""

import uuid as uuid_mod
from typing import Any

import pytest

from inspector import states
from tests.functional.conftest import Service, introspect

V = "X-OpenStack-Ironic-Inspector-API-Version"
ACTION = {"action": "set-attribute", "path": "/extra/rule", "value": "hit"}


@pytest.fixture(autouse=True)
def _no_rules(service: Service) -> Any:
    service.client.delete("/v1/rules")
    yield
    service.client.delete("/v1/rules")


def test_create_answers_200_before_1_6_and_201_after(service: Service) -> None:
    old = service.client.post(
        "/v1/rules", json={"actions": [ACTION]}, headers={V: "1.5"}
    )
    assert old.status_code == 200
    new = service.client.post(
        "/v1/rules", json={"actions": [ACTION]}, headers={V: "1.6"}
    )
    assert new.status_code == 201
    assert (
        service.client.post("/v1/rules", json={"actions": [ACTION]}).status_code == 201
    )


def test_full_and_short_forms(service: Service) -> None:
    body = {
        "description": "big machines",
        "scope": "rack-1",
        "conditions": [{"op": "ge", "field": "memory_mb", "value": 1024}],
        "actions": [ACTION],
    }
    created = service.client.post("/v1/rules", json=body).get_json()
    rule_id = created["uuid"]
    assert created["conditions"] == [
        {
            "op": "ge",
            "field": "memory_mb",
            "value": 1024,
            "multiple": "any",
            "invert": False,
        }
    ]
    assert created["actions"] == [ACTION]
    assert created["links"][0]["href"].endswith(f"/v1/rules/{rule_id}")
    assert service.client.get(f"/v1/rules/{rule_id}").get_json() == created
    listed = service.client.get("/v1/rules").get_json()["rules"]
    assert listed == [
        {
            "uuid": rule_id,
            "description": "big machines",
            "scope": "rack-1",
            "links": created["links"],
            "built_in": False,  # from 1.25 (the default is the newest)
        }
    ]
    assert "rules" in [
        r["name"] for r in service.client.get("/v1").get_json()["resources"]
    ]


def test_delete_one_and_all(service: Service) -> None:
    ids = [
        service.client.post("/v1/rules", json={"actions": [ACTION]}).get_json()["uuid"]
        for _ in range(3)
    ]
    assert service.client.delete(f"/v1/rules/{ids[0]}").status_code == 204
    resp = service.client.get(f"/v1/rules/{ids[0]}")
    assert resp.status_code == 404
    assert resp.get_json()["error"]["message"] == f"Rule {ids[0]} was not found"
    assert service.client.delete(f"/v1/rules/{ids[0]}").status_code == 404
    assert service.client.delete("/v1/rules").status_code == 204
    assert service.client.get("/v1/rules").get_json() == {"rules": []}


def test_bad_input(service: Service) -> None:
    resp = service.client.get("/v1/rules/not-a-uuid")
    assert resp.status_code == 400
    assert "Invalid rule UUID" in resp.get_json()["error"]["message"]
    resp = service.client.post(
        "/v1/rules", json={"actions": [{"action": "set-attribute", "value": 1}]}
    )
    assert resp.status_code == 400
    assert resp.get_json()["error"]["message"].startswith("Invalid rule: actions[0]:")
    assert service.client.post("/v1/rules", data="[1]").status_code == 400
    assert service.client.post("/v1/rules").status_code == 400
    rule_id = str(uuid_mod.uuid4())
    body = {"uuid": rule_id, "actions": [ACTION]}
    assert service.client.post("/v1/rules", json=body).status_code == 201
    again = service.client.post("/v1/rules", json=body)
    assert again.status_code == 409
    assert rule_id in again.get_json()["error"]["message"]


def test_rules_shape_what_is_written(service: Service) -> None:
    rules = [
        {
            "conditions": [{"op": "gt", "field": "inventory.cpu.count", "value": 0}],
            "actions": [
                {
                    "action": "set-attribute",
                    "path": "/extra/cpu_model",
                    "value": "{data[inventory][cpu][model_name]}",
                },
                {"action": "set-capability", "name": "rules", "value": "yes"},
                {"action": "add-trait", "name": "CUSTOM_INSPECTED"},
            ],
        },
        # does not match: its fail action must not fire
        {
            "conditions": [{"op": "lt", "field": "memory_mb", "value": 1}],
            "actions": [{"action": "fail", "message": "never"}],
        },
        # another scope: ignored
        {"scope": "elsewhere", "actions": [{"action": "fail", "message": "never"}]},
    ]
    for body in rules:
        assert service.client.post("/v1/rules", json=body).status_code == 201
    status = introspect(service)
    assert status["state"] == states.FINISHED, status
    uuid = status["uuid"]
    node = service.ironic.nodes[uuid]
    assert node["extra"]["cpu_model"]  # formatted from the data
    assert "rules:yes" in node["properties"]["capabilities"]
    assert "CUSTOM_INSPECTED" in node["traits"]


def test_matching_fail_rule_ends_in_error_and_writes_nothing(
    service: Service,
) -> None:
    service.client.post(
        "/v1/rules",
        json={
            "actions": [
                {"action": "set-attribute", "path": "/extra/touched", "value": True}
            ]
        },
    )
    service.client.post(
        "/v1/rules",
        json={
            "conditions": [{"op": "gt", "field": "inventory.cpu.count", "value": 0}],
            "actions": [{"action": "fail", "message": "This hardware is not welcome"}],
        },
    )
    status = introspect(service)
    uuid = status["uuid"]
    assert status["state"] == states.ERROR
    assert status["error"] == "This hardware is not welcome"
    assert "touched" not in service.ironic.nodes[uuid].get("extra", {})
    assert ("patch_node", uuid) not in service.ironic.calls
