"""Built-in rules ([rules]built_in_rules) through the API (1.25) and a real
introspection of the in-process service."""

import pathlib
from typing import Any

import pytest
from oslo_config import cfg

from inspector import states
from inspector.rules import builtin
from tests.functional.conftest import Service, introspect, run_script

V = "X-OpenStack-Ironic-Inspector-API-Version"
FIRST = builtin.synthetic_uuid(0)
NAMED = "5a1e2b3c-0000-4000-8000-00000000b1e5"
IRONIC_FILE = f"""
# Ironic's shape: no uuid (a synthetic one), args as a list and as an object
- description: built-in vendor
  priority: 50
  conditions:
    - op: "!is-empty"
      args: ["{{inventory[system_vendor][manufacturer]}}"]
  actions:
    - op: set-attribute
      args: {{path: extra/built_in_vendor, value: "{{inventory[system_vendor][manufacturer]}}"}}
    - op: add-trait
      args: [CUSTOM_BUILT_IN]
# ours, rule by rule
- uuid: {NAMED}
  description: built-in ours
  priority: 10
  actions:
    - action: set-attribute
      path: /extra/order
      value: built-in
"""


@pytest.fixture(autouse=True)
def _no_rules(service: Service) -> Any:
    service.client.delete("/v1/rules")
    yield
    service.client.delete("/v1/rules")


@pytest.fixture
def built_in(conf: cfg.ConfigOpts, tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "built-in.yaml"
    path.write_text(IRONIC_FILE)
    conf.set_override("built_in_rules", str(path), group="rules")
    return path


def _stored(service: Service, priority: int) -> str:
    resp = service.client.post(
        "/v1/rules",
        json={
            "priority": priority,
            "description": f"stored {priority}",
            "actions": [
                {"action": "set-attribute", "path": "/extra/order", "value": "stored"}
            ],
        },
    )
    assert resp.status_code == 201, resp.get_json()
    return str(resp.get_json()["uuid"])


def test_listed_from_1_25_in_running_order(
    service: Service, built_in: pathlib.Path
) -> None:
    low = _stored(service, 10)
    high = _stored(service, 100)
    listed = service.client.get("/v1/rules", headers={V: "1.25"}).get_json()["rules"]
    # priority first; a tie (10): the stored rule, then the built-in one
    assert [(r["uuid"], r["built_in"]) for r in listed] == [
        (high, False),
        (FIRST, True),
        (low, False),
        (NAMED, True),
    ]
    old = service.client.get("/v1/rules", headers={V: "1.24"}).get_json()["rules"]
    assert [r["uuid"] for r in old] == [high, low]
    assert all("built_in" not in r for r in old)
    full = service.client.get(f"/v1/rules/{FIRST}", headers={V: "1.25"}).get_json()
    assert full["built_in"] is True and full["priority"] == 50
    assert full["conditions"][0]["invert"] is True
    assert full["conditions"][0]["field"] == "inventory.system_vendor.manufacturer"
    assert full["actions"][0]["path"] == "/extra/built_in_vendor"
    stored = service.client.get(f"/v1/rules/{low}", headers={V: "1.25"}).get_json()
    assert stored["built_in"] is False
    hidden = service.client.get(f"/v1/rules/{FIRST}", headers={V: "1.24"})
    assert hidden.status_code == 404


def test_read_only(service: Service, built_in: pathlib.Path) -> None:
    for version in ("1.24", "1.25"):
        resp = service.client.delete(f"/v1/rules/{FIRST}", headers={V: version})
        assert resp.status_code == 409
        assert resp.get_json()["error"]["message"] == (
            f"Rule {FIRST} is a built-in rule (from [rules]built_in_rules): "
            "change the file and send the services SIGHUP"
        )
    taken = service.client.post(
        "/v1/rules",
        json={"uuid": NAMED, "actions": [{"action": "add-trait", "name": "CUSTOM_X"}]},
    )
    assert taken.status_code == 409
    _stored(service, 0)
    assert service.client.delete("/v1/rules").status_code == 204
    listed = service.client.get("/v1/rules").get_json()["rules"]
    assert [r["uuid"] for r in listed] == [FIRST, NAMED]  # stored rules only gone


def test_run_with_the_stored_ones(service: Service, built_in: pathlib.Path) -> None:
    stored = _stored(service, 10)  # runs before the built-in rule of priority 10
    status = introspect(service)
    assert status["state"] == states.FINISHED, status
    node = service.ironic.nodes[status["uuid"]]
    assert node["extra"]["built_in_vendor"]
    assert node["extra"]["order"] == "built-in"  # the later one wins
    assert "CUSTOM_BUILT_IN" in node["traits"]
    trial = service.client.post(
        "/v1/rules/test",
        json={"data": {"inventory": {"system_vendor": {"manufacturer": "Dell"}}}},
    ).get_json()
    assert [r["uuid"] for r in trial["rules"]] == [FIRST, stored, NAMED]
    alone = service.client.post(
        "/v1/rules/test", json={"data": {"inventory": {}}, "rules": [NAMED]}
    ).get_json()
    assert [r["uuid"] for r in alone["rules"]] == [NAMED]


@pytest.mark.parametrize("script", ["ironic-inspector", "ironic-inspector-conductor"])
def test_invalid_file_refuses_the_start(tmp_path: pathlib.Path, script: str) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(
        "- {description: ok, actions: [{op: add-trait, args: [CUSTOM_A]}]}\n"
        "- description: too many values\n"
        "  conditions: [{op: eq, args: {values: ['{inventory[a]}', 1, 2]}}]\n"
        "  actions: [{op: add-trait, args: [CUSTOM_B]}]\n"
    )
    standalone = script == "ironic-inspector"
    done = run_script(
        tmp_path,
        script,
        f"[DEFAULT]\nstandalone = {standalone}\n"
        f"[rules]\nbuilt_in_rules = {path}\n"
        f"[database]\nconnection = sqlite:///{tmp_path}/unused.sqlite\n"
        # split mode: checked, never reached
        "[coordination]\nbackend_url = etcd3+http://127.0.0.1:9\n",
    )
    assert done.returncode == 2, done.stderr
    assert (
        f"Invalid built-in rules file {path}: rule 1 (too many values): "
        "conditions[0].args.values: [" in done.stderr
    )
    assert not (tmp_path / "unused.sqlite").exists()  # refused before anything
