"""The 1.24 rule language over HTTP: priority, sensitive rules masked,
the refusals below 1.24, POST /v1/rules/test, and rules with loops,
variables and api-calls shaping a real introspection."""

import http.server
import json
import pathlib
import subprocess
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from oslo_config import cfg

from inspector import states
from inspector.db import rules as rules_db
from tests.functional.conftest import (
    Service,
    add_node,
    database_conf,
    introspect,
    run_script,
)

V = "X-OpenStack-Ironic-Inspector-API-Version"
OLD = {V: "1.23"}
HIT = {"action": "set-attribute", "path": "/extra/hit", "value": "yes"}


@pytest.fixture(autouse=True)
def _no_rules(service: Service) -> Any:
    service.client.delete("/v1/rules")
    yield
    service.client.delete("/v1/rules")


class _Hook(http.server.BaseHTTPRequestHandler):
    answer = 200
    received: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        length = int(self.headers.get("Content-Length") or 0)
        type(self).received.append(json.loads(self.rfile.read(length) or b"null"))
        self.send_response(type(self).answer)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def hook(conf: cfg.ConfigOpts) -> Iterator[tuple[str, type[_Hook]]]:
    """A loopback HTTP server that api-calls may reach, and its handler."""

    class Handler(_Hook):
        received: list[dict[str, Any]] = []

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host = f"127.0.0.1:{server.server_address[1]}"
    conf.set_override("api_call_allowed_hosts", [host], group="rules")
    try:
        yield f"http://{host}", Handler
    finally:
        conf.clear_override("api_call_allowed_hosts", group="rules")
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_priority_and_sensitive_from_1_24_only(service: Service) -> None:
    body = {
        "priority": 50,
        "sensitive": True,
        "conditions": [{"op": "eq", "field": "ipmi_password", "value": "hunter2"}],
        "actions": [
            {"action": "set-attribute", "path": "/driver_info/pw", "value": "hunter2"}
        ],
    }
    refused = service.client.post("/v1/rules", json=body, headers=OLD)
    assert refused.status_code == 400
    assert refused.get_json()["error"]["message"].startswith(
        "Invalid rule: priority: priority needs API version 1.24"
    )
    created = service.client.post("/v1/rules", json=body)
    assert created.status_code == 201, created.get_json()
    shown = created.get_json()
    assert shown["priority"] == 50 and shown["sensitive"] is True
    assert "hunter2" not in json.dumps(shown)
    assert shown["conditions"][0]["value"] == "***"
    rule_id = shown["uuid"]
    got = service.client.get(f"/v1/rules/{rule_id}").get_json()
    assert got == shown
    old = service.client.get(f"/v1/rules/{rule_id}", headers=OLD).get_json()
    assert "priority" not in old and "sensitive" not in old
    assert "hunter2" not in json.dumps(old)  # masked at every version
    listed = service.client.get("/v1/rules").get_json()["rules"]
    assert "hunter2" not in json.dumps(listed)
    # stored as given: only the answers are masked
    stored = rules_db.get(service.rt.db, rule_id)
    assert stored["actions"][0]["value"] == "hunter2"


def test_bad_new_constructs_are_400_naming_the_part(service: Service) -> None:
    cases = [
        ({"priority": 10000, "actions": [HIT]}, "priority"),
        (
            {
                "conditions": [{"op": "eq", "field": "a", "value": 1, "loop": 3}],
                "actions": [HIT],
            },
            "conditions[0].loop",
        ),
        (
            {"actions": [{"action": "api-call", "url": "http://10.0.0.1/x"}]},
            "actions[0].url",
        ),
        ({"actions": [{**HIT, "value": "{item}"}]}, "actions[0]"),
    ]
    for body, where in cases:
        resp = service.client.post("/v1/rules", json=body)
        assert resp.status_code == 400, (body, resp.get_json())
        assert resp.get_json()["error"]["message"].startswith(f"Invalid rule: {where}:")


def test_rules_shape_a_processed_node(service: Service) -> None:
    rules = [
        # runs last (priority 0): sees what the others wrote
        {
            "conditions": [{"op": "eq", "field": "node://extra.stage", "value": "two"}],
            "actions": [{"action": "add-trait", "name": "CUSTOM_STAGED"}],
        },
        {
            "priority": 10,
            "actions": [
                {"action": "set-attribute", "path": "/extra/stage", "value": "two"}
            ],
        },
        {
            "priority": 20,
            "conditions": [
                {
                    "op": "gt",
                    "field": "{inventory[memory][physical_mb]}",
                    "value": 1024,
                },
                {"op": "!is-empty", "field": "inventory.interfaces"},
            ],
            "actions": [
                {"action": "set-attribute", "path": "/extra/stage", "value": "one"},
                {
                    "action": "set-attribute",
                    "path": "/extra/memory",
                    "value": "{inventory[memory][physical_mb]}",
                },
                {
                    "action": "extend-attribute",
                    "path": "/extra/nics",
                    "value": "{item[name]}",
                    "loop": "{inventory[interfaces]}",
                },
                {
                    "action": "set-attribute",
                    "path": "/extra/bmc",
                    "value": "{node.driver_info[ipmi_address]}",
                },
            ],
        },
    ]
    for body in rules:
        resp = service.client.post("/v1/rules", json=body)
        assert resp.status_code == 201, resp.get_json()
    status = introspect(service)
    assert status["state"] == states.FINISHED, status
    node = service.ironic.nodes[status["uuid"]]
    data = service.client.get(f"/v1/introspection/{status['uuid']}/data").get_json()
    inventory = data["inventory"]
    assert node["extra"]["stage"] == "two"
    assert "CUSTOM_STAGED" in node["traits"]
    assert node["extra"]["memory"] == inventory["memory"]["physical_mb"]
    assert node["extra"]["nics"] == [i["name"] for i in inventory["interfaces"]]
    assert node["extra"]["bmc"] == node["driver_info"]["ipmi_address"]


def test_a_variable_that_does_not_resolve_is_an_error_naming_the_rule(
    service: Service,
) -> None:
    rule = service.client.post(
        "/v1/rules",
        json={"actions": [{**HIT, "value": "{inventory[no_such][thing]}"}]},
    ).get_json()
    status = introspect(service)
    assert status["state"] == states.ERROR
    assert f"rule {rule['uuid']} action 0 (set-attribute)" in status["error"]
    assert "{inventory[no_such][thing]} does not resolve" in status["error"]


def test_api_call_reaches_an_allowed_host(
    service: Service, hook: tuple[str, type[_Hook]]
) -> None:
    url, handler = hook
    resp = service.client.post(
        "/v1/rules",
        json={
            "actions": [
                {
                    "action": "api-call",
                    "url": url + "/inspected",
                    "timeout": 5,
                    "body": {"node": "{node[uuid]}", "cpus": "{inventory[cpu][count]}"},
                }
            ]
        },
    )
    assert resp.status_code == 201, resp.get_json()
    status = introspect(service)
    assert status["state"] == states.FINISHED, status
    data = service.client.get(f"/v1/introspection/{status['uuid']}/data").get_json()
    cpus = data["inventory"]["cpu"]["count"]
    assert handler.received == [{"node": status["uuid"], "cpus": cpus}]


def test_a_failing_api_call_is_an_error_on_the_node(
    service: Service, hook: tuple[str, type[_Hook]]
) -> None:
    url, handler = hook
    handler.answer = 500
    rule = service.client.post(
        "/v1/rules", json={"actions": [{"action": "api-call", "url": url + "/x"}]}
    ).get_json()
    status = introspect(service)
    assert status["state"] == states.ERROR
    assert f"rule {rule['uuid']} action 0 (api-call)" in status["error"]
    assert "answered HTTP 500" in status["error"]


def test_rules_test_writes_nothing(service: Service, payload: Any) -> None:
    node = add_node(service)
    data = payload("52:54:00:00:00:01", node["driver_info"]["ipmi_address"])
    stored = service.client.post(
        "/v1/rules",
        json={
            "conditions": [{"op": "ge", "field": "inventory.cpu.count", "value": 1}],
            "actions": [{"action": "add-trait", "name": "CUSTOM_TRIED"}],
        },
    ).get_json()
    before_calls = list(service.ironic.calls)
    before_version = rules_db.version(service.rt.db)
    answer = service.client.post(
        "/v1/rules/test",
        json={"data": data, "node": {"uuid": node["uuid"], "extra": {}}},
    )
    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    assert body["applied"] == [stored["uuid"]]
    assert body["rules"][0]["conditions"][0]["matched"] is True
    assert body["changes"]["traits_to_add"] == ["CUSTOM_TRIED"]
    # a rule not stored, tried by its body
    tried = service.client.post(
        "/v1/rules/test",
        json={
            "node_uuid": node["uuid"],
            "data": data,
            "rules": [{"actions": [{**HIT, "value": "{inventory[cpu][count]}"}]}],
        },
    ).get_json()
    assert tried["changes"]["node_patches"] == [
        {"op": "add", "path": "/extra/hit", "value": data["inventory"]["cpu"]["count"]}
    ]
    writes = [
        c for c in service.ironic.calls[len(before_calls) :] if c[0] != "get_node"
    ]
    assert all(c[0] in ("list_ports",) for c in writes), writes
    assert rules_db.version(service.rt.db) == before_version
    assert "CUSTOM_TRIED" not in service.ironic.nodes[node["uuid"]].get("traits", [])


def test_rules_test_by_node_uses_its_stored_data(service: Service) -> None:
    status = introspect(service)
    service.client.post(
        "/v1/rules",
        json={"actions": [{**HIT, "value": "{inventory[cpu][count]}"}]},
    )
    answer = service.client.post(
        "/v1/rules/test", json={"node_uuid": status["uuid"]}
    ).get_json()
    assert answer["rules"][0]["matched"] is True
    assert answer["changes"]["node_patches"][0]["path"] == "/extra/hit"


def test_rules_test_bad_input_and_version(service: Service) -> None:
    assert (
        service.client.post("/v1/rules/test", json={}, headers=OLD).status_code == 404
    )
    for body, words in (
        ({}, "data: post the introspection data"),
        ({"data": []}, "data: must be a JSON object"),
        ({"data": {}, "rules": []}, "rules: must be a non-empty list"),
        ({"data": {}, "rules": [{"actions": []}]}, "rules[0]: Invalid rule: actions"),
        ({"data": {}, "colour": 1}, "colour: unknown field"),
    ):
        resp = service.client.post("/v1/rules/test", json=body)
        assert resp.status_code == 400, (body, resp.get_json())
        assert resp.get_json()["error"]["message"].startswith(words), resp.get_json()


def _manage(
    tmp_path: pathlib.Path, service: Service, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return run_script(
        tmp_path,
        "ironic-inspector-manage",
        database_conf(service),
        "rules",
        *args,
        stdin=stdin,
    )


def test_manage_rules_test_export_masked(
    service: Service, tmp_path: pathlib.Path, payload: Any
) -> None:
    secret = service.client.post(
        "/v1/rules",
        json={
            "sensitive": True,
            "actions": [
                {"action": "set-attribute", "path": "/extra/pw", "value": "s3"}
            ],
        },
    ).get_json()
    data = payload("52:54:00:00:00:02", "10.1.1.1")
    tried = _manage(tmp_path, service, "test", "--data", "-", stdin=json.dumps(data))
    assert tried.returncode == 0, tried.stderr
    answer = json.loads(tried.stdout)
    assert answer["applied"] == [secret["uuid"]]
    assert answer["changes"]["node_patches"] == [
        {"op": "add", "path": "/extra/pw", "value": "***"}
    ]
    for fmt in ("inspector", "ironic"):
        exported = _manage(tmp_path, service, "export", "--format", fmt)
        assert exported.returncode == 0, exported.stderr
        assert "s3" not in exported.stdout and '"***"' in exported.stdout
        assert "sensitive, its values masked (--with-secrets" in exported.stderr
        refused = _manage(
            tmp_path, service, "import", "--format", fmt, "-", stdin=exported.stdout
        )
        assert refused.returncode == 2
        assert "export it with --with-secrets" in refused.stderr
    to_ironic = _manage(
        tmp_path, service, "export", "--format", "ironic", "--with-secrets"
    )
    assert json.loads(to_ironic.stdout)[0]["actions"][0]["args"]["value"] == "s3"
    assert "sensitive, written with its values" in to_ironic.stderr
    backup = _manage(tmp_path, service, "export", "--with-secrets")
    assert json.loads(backup.stdout)[0]["actions"][0]["value"] == "s3"
    service.client.delete("/v1/rules")
    restored = _manage(tmp_path, service, "import", "-", stdin=backup.stdout)
    assert restored.returncode == 0, restored.stderr
    assert rules_db.get(service.rt.db, secret["uuid"])["sensitive"] is True
