"""POST /v1/ironic/inspections, the push of Ironic's inspection hook,
through the whole app: authenticated (anonymous refused and logged,
refused under noauth unless allowed, the service role let in), checked
against Ironic (a forged start or an unknown node refused, nothing
recorded), a duplicate dropped, bad input a 4xx, and a pushed run
reapplied as our own are."""

import base64
import copy
import logging
import pathlib
from collections.abc import Iterator
from typing import Any

import bcrypt
import pytest
from flask.testing import FlaskClient
from keystonemiddleware import auth_token
from keystonemiddleware import fixture as ks_fixture
from oslo_config import cfg

from inspector import states
from inspector.api.app import create_app
from tests.functional.conftest import Service, add_node, build_payload, random_mac

PATH = "/v1/ironic/inspections"
STARTED = "2026-12-01T10:00:00.123456+00:00"


def inspecting(service: Service, started: str = STARTED) -> dict[str, Any]:
    """A node Ironic is inspecting (agent), started at ``started``."""
    node = add_node(service)
    node["inspect_interface"] = "agent"
    node["inspection_started_at"] = started
    node["inspection_finished_at"] = None
    return node


def push_of(node: dict[str, Any], started: str = STARTED) -> dict[str, Any]:
    """What the hook sends for ``node``'s inspection."""
    data = build_payload(random_mac(), node["driver_info"]["ipmi_address"])
    inventory = data.pop("inventory")
    return {
        "node_uuid": node["uuid"],
        "node_name": node["name"],
        "inspect_interface": "agent",
        "inspection_started_at": started,
        "inventory": inventory,
        "plugin_data": data,
        "logs": None,
    }


def history(service: Service, uuid: str) -> list[dict[str, Any]]:
    resp = service.client.get(f"/v1/introspection/{uuid}/history")
    assert resp.status_code == 200, resp.get_json()
    runs: list[dict[str, Any]] = resp.get_json()["history"]
    return runs


def _basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


@pytest.fixture
def basic(
    service: Service, conf: cfg.ConfigOpts, tmp_path: pathlib.Path
) -> FlaskClient:
    """The app with http_basic, one user: ironic / s3cret."""
    users = tmp_path / "htpasswd"
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4)).decode()
    users.write_text(f"ironic:{hashed}\n")
    conf.set_override("auth_strategy", "http_basic")
    conf.set_override("http_basic_auth_user_file", str(users))
    return create_app(service.rt).test_client()


IRONIC = _basic("ironic", "s3cret")


def test_a_push_is_recorded_as_ironics_inspection(
    service: Service, basic: FlaskClient
) -> None:
    node = inspecting(service)

    resp = basic.post(PATH, json=push_of(node), headers=IRONIC)

    assert resp.status_code == 201, resp.get_json()
    body = resp.get_json()
    assert body["recorded"] and body["node_uuid"] == node["uuid"]
    (run,) = history(service, node["uuid"])
    assert run["uuid"] == body["run"]
    assert (run["source"], run["interface"]) == ("ironic", "agent")
    status = service.client.get(f"/v1/introspection/{node['uuid']}").get_json()
    assert status["state"] == states.FINISHED


def test_a_duplicate_is_dropped(service: Service, basic: FlaskClient) -> None:
    node = inspecting(service)
    first = basic.post(PATH, json=push_of(node), headers=IRONIC)
    assert first.status_code == 201

    again = basic.post(PATH, json=push_of(node), headers=IRONIC)

    assert again.status_code == 200, again.get_json()
    assert again.get_json()["message"] == "already recorded"
    assert not again.get_json()["recorded"]
    assert len(history(service, node["uuid"])) == 1


def test_an_anonymous_push_is_refused_and_logged(
    service: Service, basic: FlaskClient, caplog: pytest.LogCaptureFixture
) -> None:
    node = inspecting(service)
    with caplog.at_level(logging.WARNING):
        resp = basic.post(PATH, json=push_of(node))
        wrong = basic.post(PATH, json=push_of(node), headers=_basic("ironic", "x"))

    assert resp.status_code == 401 and wrong.status_code == 401
    assert caplog.text.count(f"Refused POST {PATH} from 127.0.0.1") == 2
    assert service.client.get(f"/v1/introspection/{node['uuid']}").status_code == 404


def test_a_forged_start_is_refused_logged_and_never_recorded(
    service: Service, basic: FlaskClient, caplog: pytest.LogCaptureFixture
) -> None:
    node = inspecting(service)
    forged = push_of(node, started="2026-12-01T10:00:01+00:00")

    with caplog.at_level(logging.WARNING):
        resp = basic.post(PATH, json=forged, headers=IRONIC)

    assert resp.status_code == 409, resp.get_json()
    message = resp.get_json()["error"]["message"]
    assert (
        "Ironic is running an inspection started at 2026-12-01T10:00:00.123456"
        in message
    )
    assert "Refused a push" in caplog.text and "127.0.0.1 (user ironic)" in caplog.text
    assert service.client.get(f"/v1/introspection/{node['uuid']}").status_code == 404


def test_a_node_ironic_does_not_have_is_refused(
    service: Service, basic: FlaskClient
) -> None:
    node = inspecting(service)
    del service.ironic.nodes[node["uuid"]]

    resp = basic.post(PATH, json=push_of(node), headers=IRONIC)

    assert resp.status_code == 404
    assert "was not found in Ironic" in resp.get_json()["error"]["message"]


def test_noauth_refuses_pushes_unless_allowed(
    service: Service, conf: cfg.ConfigOpts, caplog: pytest.LogCaptureFixture
) -> None:
    node = inspecting(service)
    with caplog.at_level(logging.WARNING):
        refused = service.client.post(PATH, json=push_of(node))

    assert refused.status_code == 403
    assert "allow_unauthenticated" in refused.get_json()["error"]["message"]
    assert "Refused an unauthenticated push" in caplog.text
    assert service.client.get(f"/v1/introspection/{node['uuid']}").status_code == 404

    conf.set_override("allow_unauthenticated", True, group="ironic_push")
    taken = service.client.post(PATH, json=push_of(node))
    assert taken.status_code == 201, taken.get_json()


@pytest.fixture
def keystone(service: Service, conf: cfg.ConfigOpts) -> Iterator[FlaskClient]:
    """The app behind Keystone: tokens ``token-<role>`` for the service,
    admin, reader and member roles."""
    conf.set_override("auth_strategy", "keystone")
    for group, options in auth_token.list_opts():
        conf.register_opts(options, group=group)
    conf.set_override(
        "www_authenticate_uri", "http://keystone.example/identity", "keystone_authtoken"
    )
    tokens = ks_fixture.AuthTokenFixture()
    tokens.setUp()
    for role in ("service", "admin", "reader", "member"):
        tokens.add_token_data(
            token_id=f"token-{role}",
            role_list=[role],
            project_id="service",
            user_id=f"ironic-{role}",
        )
    yield create_app(service.rt).test_client()
    tokens.cleanUp()


@pytest.mark.parametrize(
    "role,status", [("service", 201), ("admin", 201), ("reader", 403), ("member", 403)]
)
def test_keystone_lets_in_the_service_role(
    service: Service, keystone: FlaskClient, role: str, status: int
) -> None:
    node = inspecting(service)

    resp = keystone.post(
        PATH, json=push_of(node), headers={"X-Auth-Token": f"token-{role}"}
    )

    assert resp.status_code == status, resp.get_json()
    if status == 403:
        assert "introspection:ironic_push" in resp.get_json()["error"]["message"]


def _without(body: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k != key}


@pytest.mark.parametrize(
    "change,message",
    [
        (lambda b: _without(b, "inventory"), "inventory: must be the ramdisk's"),
        (lambda b: {**b, "node_uuid": "node-1"}, "node_uuid: must be the UUID"),
        (lambda b: {**b, "inspection_started_at": 5}, "inspection_started_at: must"),
        (lambda b: {**b, "inspection_started_at": "soon"}, "not an ISO 8601 time"),
        (lambda b: {**b, "plugin_data": []}, "plugin_data: must be a JSON object"),
        (lambda b: {**b, "logs": {"x": 1}}, "logs: must be the ramdisk's logs"),
        (lambda b: {**b, "inventory": {"nothing": 1}}, "not an ironic-python-agent"),
        (
            lambda b: {
                **b,
                "inventory": {**b["inventory"], "interfaces": [{"mac_address": "x"}]},
            },
            "'x' is not a MAC address",
        ),
    ],
)
def test_bad_input_is_a_400_naming_it(
    service: Service, basic: FlaskClient, change: Any, message: str
) -> None:
    node = inspecting(service)

    resp = basic.post(PATH, json=change(push_of(node)), headers=IRONIC)

    assert resp.status_code == 400, resp.get_json()
    assert message in resp.get_json()["error"]["message"]
    assert service.client.get(f"/v1/introspection/{node['uuid']}").status_code == 404


def test_a_body_larger_than_allowed_is_a_413(
    service: Service, basic: FlaskClient, conf: cfg.ConfigOpts
) -> None:
    conf.set_override("max_request_body_size", 4096)
    node = inspecting(service)
    body = push_of(node)
    body["logs"] = "A" * 8192

    resp = create_app(service.rt).test_client().post(PATH, json=body, headers=IRONIC)

    assert resp.status_code == 413


def test_secrets_are_redacted_as_the_ramdisks(
    service: Service, basic: FlaskClient
) -> None:
    node = inspecting(service)
    body = push_of(node)
    body["plugin_data"]["bmc_password"] = "hunter2"

    assert basic.post(PATH, json=body, headers=IRONIC).status_code == 201

    raw = service.client.get(f"/v1/introspection/{node['uuid']}/data/unprocessed")
    assert raw.get_json()["bmc_password"] == "***"


def test_a_pushed_run_is_reapplied_as_ours_are(
    service: Service, basic: FlaskClient
) -> None:
    node = inspecting(service)
    pushed = push_of(node)
    assert basic.post(PATH, json=pushed, headers=IRONIC).status_code == 201
    raw = service.client.get(f"/v1/introspection/{node['uuid']}/data/unprocessed")
    expected = copy.deepcopy(pushed["plugin_data"])
    expected["inventory"] = pushed["inventory"]
    assert raw.get_json() == expected

    resp = service.client.post(f"/v1/introspection/{node['uuid']}/data/unprocessed")

    assert resp.status_code == 202, resp.get_json()
    status = service.wait_for(node["uuid"], *states.FINAL)
    assert status["state"] == states.FINISHED and status["error"] is None
    runs = history(service, node["uuid"])
    assert [r["source"] for r in runs] == ["inspector", "ironic"]
    # processed by our hooks: the node's ports were made from the inventory
    macs = {p["address"] for p in service.ironic.node_ports(node["uuid"])}
    assert pushed["inventory"]["interfaces"][0]["mac_address"] in macs
