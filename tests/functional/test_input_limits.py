"""Bad and hostile input: a 4xx naming the problem, nothing stored, no secrets."""

import json
import logging
import pathlib
from typing import Any

import pytest
from oslo_config import cfg

from inspector import states
from inspector.api import params
from inspector.api.app import create_app
from tests.functional.conftest import (
    Service,
    add_node,
    introspect,
    random_bmc,
    random_mac,
    run_script,
)

SQLISH = [
    "' OR '1'='1",
    "1; DROP TABLE introspections; --",
    '" OR 1=1 --',
    "%27%20OR%201=1",
    "../../etc/passwd",
    "..%2F..%2Fetc%2Fpasswd",
]


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def _settled(service: Service) -> dict[str, Any]:
    """Introspections no step is moving: a bad post must leave them alone.

    Earlier tests share the service and may still have steps running (a
    status can go from processing to finished meanwhile under load)."""
    listing = service.client.get("/v1/introspection?limit=0").get_json()
    return {
        s["uuid"]: s
        for s in listing["introspection"]
        if s["state"] in (*states.FINAL, states.WAITING)
    }


@pytest.mark.parametrize(
    "body,fragment",
    [
        (b"{", "Invalid JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (b"\xff\xfe{}", "not valid UTF-8"),
        (b'{"a": NaN}', "NaN is not valid JSON"),
        (json.dumps({"a": _nested(params.MAX_DEPTH + 1)}).encode(), "nested deeper"),
        (json.dumps({"a": [0] * (params.MAX_ITEMS + 1)}).encode(), "more than"),
        (json.dumps({"inventory": []}).encode(), "Invalid ramdisk data at inventory"),
        (
            json.dumps({"inventory": {"interfaces": {}}}).encode(),
            "Invalid ramdisk data at inventory/interfaces",
        ),
        (
            json.dumps({"inventory": {"interfaces": [{"mac_address": 5}]}}).encode(),
            "inventory/interfaces/0/mac_address",
        ),
        (
            json.dumps({"error": ["not", "text"]}).encode(),
            "Invalid ramdisk data at error",
        ),
        (
            json.dumps(
                {
                    "inventory": {
                        "interfaces": [
                            {"mac_address": "52:54:00:12:34:56"},
                            {"mac_address": "52:54:00:zz:34:56"},
                        ]
                    }
                }
            ).encode(),
            "at inventory/interfaces/1/mac_address: '52:54:00:zz:34:56' is not a "
            "MAC address",
        ),
        (
            json.dumps({"boot_interface": "01-52-54-00-12-34-5g"}).encode(),
            "at boot_interface: '01-52-54-00-12-34-5g' is not a MAC address",
        ),
    ],
)
def test_bad_ramdisk_bodies(service: Service, body: bytes, fragment: str) -> None:
    before = _settled(service)
    resp = service.client.post(
        "/v1/continue", data=body, content_type="application/json"
    )
    assert resp.status_code == 400, resp.get_data()
    assert fragment in resp.get_json()["error"]["message"]
    after = _settled(service)
    assert {u: after.get(u) for u in before} == before


def test_deep_json_is_400_not_a_crash(service: Service) -> None:
    body = b'{"a": ' + b"[" * 100000 + b"]" * 100000 + b"}"
    resp = service.client.post(
        "/v1/continue", data=body, content_type="application/json"
    )
    assert resp.status_code == 400


def test_body_size_limit_is_configurable(
    service: Service, conf: cfg.ConfigOpts
) -> None:
    conf.set_override("max_request_body_size", 2048)
    client = create_app(service.rt).test_client()
    resp = client.post(
        "/v1/continue",
        data=b'{"a": "' + b"x" * 4096 + b'"}',
        content_type="application/json",
    )
    assert resp.status_code == 413
    assert resp.get_json()["error"]["message"] == "The request body is too large"


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/xml", "multipart/form-data; boundary=x", ""],
)
def test_other_content_types_never_500(service: Service, content_type: str) -> None:
    resp = service.client.post(
        "/v1/continue", data=b"<xml/>", content_type=content_type
    )
    assert resp.status_code == 400


@pytest.mark.parametrize("value", SQLISH)
def test_sql_and_traversal_in_every_parameter(service: Service, value: str) -> None:
    from urllib.parse import quote

    quoted = quote(value, safe="")
    answers = [
        service.client.get(f"/v1/introspection/{quoted}"),
        service.client.post(f"/v1/introspection/{quoted}"),
        service.client.post(f"/v1/introspection/{quoted}/abort"),
        service.client.get(f"/v1/introspection/{quoted}/data"),
        service.client.get(f"/v1/introspection?marker={quoted}"),
        service.client.get(f"/v1/introspection?state={quoted}"),
        service.client.get(f"/v1/introspection?limit={quoted}"),
        service.client.post(f"/v1/introspection/{random_bmc()}?manage_boot={quoted}"),
        service.client.get(f"/v1/rules/{quoted}"),
        service.client.delete(f"/v1/rules/{quoted}"),
        service.client.post("/v1/rules", json={"uuid": value, "actions": []}),
        service.client.post(
            "/v1/rules",
            json={
                "description": value,
                "conditions": [{"op": "eq", "field": value, "value": value}],
                "actions": [
                    {"action": "set-attribute", "path": "/extra/x", "value": value}
                ],
            },
        ),
    ]
    for resp in answers:
        assert 400 <= resp.status_code < 500 or resp.status_code in (200, 201), (
            resp.request.path,
            resp.status_code,
            resp.get_data()[:200],
        )
    # the tables are intact
    assert service.client.get("/v1/introspection").status_code == 200
    service.client.delete("/v1/rules")


def test_secrets_in_posted_data_are_not_kept_or_logged(
    service: Service, payload: Any, caplog: pytest.LogCaptureFixture
) -> None:
    node = add_node(service)
    uuid = node["uuid"]
    data = payload(random_mac(), node["driver_info"]["ipmi_address"])
    data["inventory"]["bmc_password"] = "hunter2-bmc"
    data["extra"] = {"vault": {"api_token": "hunter2-token", "Secret": "hunter2-s"}}
    with caplog.at_level(logging.DEBUG):
        introspect(service, node, data=data)
    for kind in ("data", "data/unprocessed"):
        text = service.client.get(f"/v1/introspection/{uuid}/{kind}").get_data(
            as_text=True
        )
        assert "hunter2" not in text
    raw = service.client.get(f"/v1/introspection/{uuid}/data/unprocessed").get_json()
    assert raw["inventory"]["bmc_password"] == "***"
    assert raw["extra"]["vault"] == {"api_token": "***", "Secret": "***"}
    assert "hunter2" not in caplog.text


def test_secret_options_never_logged(tmp_path: pathlib.Path) -> None:
    conf = (
        "[DEFAULT]\nstandalone = False\ndebug = True\n"
        "transport_url = rabbit://inspector:TRANSPORTPW@127.0.0.1:1/\n"
        "[database]\nconnection = postgresql+psycopg2://inspector:DBPW@127.0.0.1:1/x\n"
        "max_retries = 0\n"
        "[coordination]\nbackend_url = etcd3+http://user:ETCDPW@127.0.0.1:1\n"
    )
    for script in ("ironic-inspector-conductor", "ironic-inspector-status"):
        args = ("upgrade", "check") if script.endswith("status") else ()
        result = run_script(tmp_path, script, conf, *args)
        output = result.stdout + result.stderr
        assert result.returncode != 0
        for secret in ("TRANSPORTPW", "DBPW", "ETCDPW"):
            assert secret not in output, (script, output[-2000:])


@pytest.mark.parametrize(
    "mac",
    [
        "52:54:00:12:34:56",
        "52-54-00-AB-cd-EF",
        "",
        None,
        # InfiniBand: 20 octets, as ironic-python-agent reports IPoIB ports
        ":".join(["a0"] * 20),
    ],
)
def test_macs_a_ramdisk_sends_are_accepted(mac: str | None) -> None:
    from inspector.api import payload

    payload.validate(
        {
            "boot_interface": "01-52-54-00-12-34-56",
            "inventory": {"interfaces": [{"mac_address": mac}]},
        }
    )
