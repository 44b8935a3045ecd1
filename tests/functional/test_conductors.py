"""The conductor view in the standalone shape: HTTP, the CLI (against the
same database) and routing agree; bad input is refused."""

import json
import logging
import pathlib
import subprocess
from typing import Any

import pytest
from oslo_config import cfg

from inspector.api import errors
from tests.functional.conftest import Service, add_node, database_conf, run_script

V119 = {"X-OpenStack-Ironic-Inspector-API-Version": "1.19"}


def _host(service: Service) -> str:
    (view,) = [v for v in service.rt.conductors.conductors() if v["alive"]]
    return str(view["hostname"])


def _cli(
    service: Service, tmp_path: pathlib.Path, *args: str
) -> subprocess.CompletedProcess[str]:
    conf = f"[DEFAULT]\nhost = {_host(service)}\n" + database_conf(service)
    return run_script(tmp_path, "ironic-inspector-manage", conf, "conductor", *args)


def _http(service: Service) -> list[dict[str, Any]]:
    body = service.client.get("/v1/conductors", headers=V119).get_json()
    return [
        {k: c[k] for k in ("hostname", "alive", "enabled", "disabled_reason")}
        for c in body["conductors"]
    ]


def _from_cli(service: Service, tmp_path: pathlib.Path) -> list[dict[str, Any]]:
    result = _cli(service, tmp_path, "list", "--json")
    assert result.returncode == 0, result.stderr
    return [
        {k: c[k] for k in ("hostname", "alive", "enabled", "disabled_reason")}
        for c in json.loads(result.stdout)
    ]


def test_http_cli_and_routing_agree(
    service: Service,
    tmp_path: pathlib.Path,
    conf: cfg.ConfigOpts,
    caplog: pytest.LogCaptureFixture,
) -> None:
    host = _host(service)
    assert (
        _http(service)
        == _from_cli(service, tmp_path)
        == [{"hostname": host, "alive": True, "enabled": True, "disabled_reason": None}]
    )
    result = _cli(service, tmp_path, "disable", host, "--reason", "firmware")
    assert result.returncode == 0
    assert "last enabled conductor" in result.stderr  # the one of this process
    assert _http(service) == _from_cli(service, tmp_path)
    assert _http(service)[0]["disabled_reason"] == "firmware"
    node = add_node(service)
    caplog.set_level(logging.DEBUG, logger=errors.__name__)
    refused = service.client.post(f"/v1/introspection/{node['uuid']}")
    assert refused.status_code == 503
    message = refused.get_json()["error"]["message"]
    assert "no conductor is available" in message and host not in message
    assert f"the conductor {host} is disabled (firmware)" in caplog.text
    resp = service.client.patch(
        f"/v1/conductors/{host}", headers=V119, json={"enabled": True}
    )
    assert resp.status_code == 200 and resp.get_json()["enabled"] is True
    assert _http(service) == _from_cli(service, tmp_path)
    assert service.client.post(f"/v1/introspection/{node['uuid']}").status_code == 202
    service.client.post(f"/v1/introspection/{node['uuid']}/abort")


def test_bad_requests(service: Service, tmp_path: pathlib.Path) -> None:
    host = _host(service)
    for body, fragment in [
        ({}, "enabled is required"),
        ({"enabled": "false"}, "enabled is required"),
        ({"enabled": True, "disabled_reason": "x"}, "only for enabled = false"),
        ({"enabled": False, "disabled_reason": "x" * 256}, "at most 255"),
        ({"enabled": False, "colour": "red"}, "Unknown field 'colour'"),
    ]:
        resp = service.client.patch(f"/v1/conductors/{host}", headers=V119, json=body)
        assert resp.status_code == 400, body
        assert fragment in resp.get_json()["error"]["message"]
    assert service.client.get("/v1/conductors/ghost", headers=V119).status_code == 404
    assert (
        service.client.get(
            "/v1/conductors",
            headers={"X-OpenStack-Ironic-Inspector-API-Version": "1.18"},
        ).status_code
        == 404
    )
    result = _cli(service, tmp_path, "show", "ghost")
    assert result.returncode == 1 and "Conductor ghost was not found" in result.stderr
    assert _http(service)[0]["enabled"] is True  # nothing changed


def test_forget_a_conductor_gone_for_good(
    service: Service, tmp_path: pathlib.Path
) -> None:
    """A conductor once disabled keeps a state document after it stopped,
    so it stays listed as dead; ``conductor forget`` removes it, and only
    it: a live one is refused, an unknown one is named."""
    from inspector.coordination.conductor_state import DatabaseStateStore

    host = _host(service)
    store = DatabaseStateStore(service.rt.db)
    store.put("retired-7", {"enabled": False})
    try:
        listed = {c["hostname"]: c["alive"] for c in _from_cli(service, tmp_path)}
        assert listed == {host: True, "retired-7": False}
        live = _cli(service, tmp_path, "forget", host)
        assert live.returncode == 1
        assert "is alive" in live.stderr and "cannot be forgotten" in live.stderr
        unknown = _cli(service, tmp_path, "forget", "nobody-9")
        assert unknown.returncode == 1 and "nobody-9" in unknown.stderr
        done = _cli(service, tmp_path, "forget", "retired-7")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "Conductor retired-7 forgotten"
        assert [c["hostname"] for c in _http(service)] == [host]
    finally:
        store.delete("retired-7")


def test_a_conductor_enabled_again_is_listed_like_one_never_disabled(
    service: Service,
) -> None:
    """Enabling drops the state document: a conductor disabled, enabled
    again and then stopped cleanly is gone from the list, not listed as
    dead until ``conductor forget`` (a disabled one stays listed)."""
    from inspector.coordination.conductor_state import DatabaseStateStore

    store = DatabaseStateStore(service.rt.db)
    store.put("stopped-3", {"enabled": False, "reason": "disk swap"})
    try:
        assert {c["hostname"]: c["alive"] for c in _http(service)}["stopped-3"] is False
        resp = service.client.patch(
            "/v1/conductors/stopped-3", headers=V119, json={"enabled": True}
        )
        assert resp.status_code == 200, resp.get_data(as_text=True)
        body = resp.get_json()
        assert (body["hostname"], body["alive"], body["enabled"]) == (
            "stopped-3",
            False,
            True,
        )
        assert store.get("stopped-3") is None
        assert "stopped-3" not in [c["hostname"] for c in _http(service)]
    finally:
        store.delete("stopped-3")
