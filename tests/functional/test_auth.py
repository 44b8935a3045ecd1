"""Authentication strategies and the policy, endpoint by endpoint and role by role."""

import base64
import html
import pathlib
import re
from collections.abc import Iterator
from typing import Any

import bcrypt
import pytest
from flask.testing import FlaskClient
from keystonemiddleware import auth_token
from keystonemiddleware import fixture as ks_fixture
from oslo_config import cfg

from inspector.api import access
from inspector.api.app import create_app
from inspector.db import rules as rules_db
from tests.functional.conftest import Service

# fixed: they name the tests, which pytest-xdist's workers must collect alike
NODE = "5c9a1d8f-8c26-4a18-8d3a-132b5dcfd1a0"
RULE = "b34f0c17-d25f-45d6-85be-aa88fc4ea468"
HOST = "no-such-conductor"

# (method, path, who may: "public", "reader" or "admin")
ENDPOINTS = [
    ("GET", "/", "public"),
    ("GET", "/v1", "public"),
    ("GET", "/v1/openapi.json", "public"),
    ("POST", "/v1/continue", "public"),
    ("GET", "/v1/introspection", "reader"),
    ("GET", f"/v1/introspection/{NODE}", "reader"),
    ("POST", f"/v1/introspection/{NODE}", "admin"),
    ("POST", f"/v1/introspection/{NODE}/abort", "admin"),
    ("GET", f"/v1/introspection/{NODE}/data", "reader"),
    ("GET", f"/v1/introspection/{NODE}/data/unprocessed", "reader"),
    ("POST", f"/v1/introspection/{NODE}/data/unprocessed", "admin"),
    ("GET", "/v1/rules", "reader"),
    ("POST", "/v1/rules", "admin"),
    ("DELETE", "/v1/rules", "admin"),
    ("GET", f"/v1/rules/{RULE}", "reader"),
    ("DELETE", f"/v1/rules/{RULE}", "admin"),
    ("POST", "/v1/rules/test", "admin"),
    ("GET", "/v1/conductors", "reader"),
    ("GET", f"/v1/conductors/{HOST}", "reader"),
    ("PATCH", f"/v1/conductors/{HOST}", "admin-only"),
    ("GET", "/v1/pxe-filters", "reader"),
    ("GET", f"/v1/introspection/{NODE}/history", "reader"),
    ("GET", f"/v1/introspection/{NODE}/changes", "reader"),
    ("GET", "/v1/inventory", "reader"),
    ("GET", "/v1/inventory/summary", "reader"),
    ("GET", "/v1/inventory/outliers", "reader"),
    ("GET", "/v1/inventory/cabling", "reader"),
    ("GET", "/fleet", "reader"),
    ("GET", f"/fleet/nodes/{NODE}", "reader"),
    ("GET", "/fleet/nodes", "reader"),
    ("GET", "/fleet/outliers", "reader"),
    ("GET", "/fleet/cabling", "reader"),
    ("GET", "/fleet/changes", "reader"),
    ("POST", "/v1/ironic/inspections", "admin"),
]
ROLES = {
    "none": ["member"],
    "reader": ["reader"],
    "admin": ["admin"],
    "service": ["service"],
}
MAY = {
    "public": set(ROLES),
    "reader": {"reader", "admin", "service"},
    "admin": {"admin", "service"},
    "admin-only": {"admin"},
}


@pytest.fixture(autouse=True)
def _no_rule_left(service: Service) -> Iterator[None]:
    """The matrix creates ``fail`` rules: none may outlive its test (with
    the tests spread over processes, the matrix's DELETE may run in
    another one, and every later introspection there would fail)."""
    yield
    rules_db.delete_all(service.rt.db)  # not over HTTP: no policy involved


def _call(client: FlaskClient, method: str, path: str, **kwargs: Any) -> Any:
    body = (
        {"actions": [{"action": "fail", "message": "x"}]}
        if path == "/v1/rules" and method == "POST"
        else {}
    )
    return client.open(path, method=method, json=body, **kwargs)


def test_every_route_has_a_policy_rule(service: Service) -> None:
    app = create_app(service.rt)
    endpoints = {r.endpoint for r in app.url_map.iter_rules()} - {"static"}
    assert endpoints == set(access.ENDPOINT_RULES)
    rules = [r for r in app.url_map.iter_rules() if r.endpoint != "static"]
    methods = {r.rule: r.methods for r in rules}
    assert None not in methods.values(), methods  # Flask routes always name them
    routes = {
        (m, r.rule) for r in rules for m in (r.methods or set()) - {"HEAD", "OPTIONS"}
    }
    covered = {
        (
            m,
            p.replace(NODE, "<node_id>")
            .replace(RULE, "<rule_id>")
            .replace(HOST, "<host>"),
        )
        for m, p, _ in ENDPOINTS
    }
    assert {(m, r.rstrip("/") or "/") for m, r in routes} == covered


@pytest.fixture
def keystone(
    service: Service, conf: cfg.ConfigOpts
) -> Iterator[tuple[FlaskClient, dict[str, str]]]:
    conf.set_override("auth_strategy", "keystone")
    for group, options in auth_token.list_opts():
        conf.register_opts(options, group=group)
    conf.set_override(
        "www_authenticate_uri",
        "http://keystone.example/identity",
        group="keystone_authtoken",
    )
    tokens = ks_fixture.AuthTokenFixture()
    tokens.setUp()
    ids = {name: f"token-{name}" for name in ROLES}
    for name, roles in ROLES.items():
        tokens.add_token_data(
            token_id=ids[name], role_list=roles, project_id="p1", user_id=f"user-{name}"
        )
    yield create_app(service.rt).test_client(), ids
    tokens.cleanUp()


@pytest.mark.parametrize("method,path,who", ENDPOINTS)
def test_keystone_matrix(
    keystone: tuple[FlaskClient, dict[str, str]], method: str, path: str, who: str
) -> None:
    client, tokens = keystone
    anonymous = _call(client, method, path)
    assert (anonymous.status_code == 401) == (who != "public"), anonymous.get_json()
    for role, token in tokens.items():
        resp = _call(client, method, path, headers={"X-Auth-Token": token})
        if role in MAY[who]:
            assert resp.status_code not in (401, 403), (role, resp.get_json())
        else:
            assert resp.status_code == 403, (role, resp.status_code)
            message = _message(resp)
            assert message.startswith("Access to introspection") and "denied" in message


def _message(resp: Any) -> str:
    """An error's message: the API's JSON, or the /fleet pages' HTML."""
    if resp.mimetype == "text/html":
        found = re.search(
            r'<p class="bad" id="message">([^<]*)</p>', resp.get_data(True)
        )
        assert found, resp.get_data(True)
        return html.unescape(found[1])
    message: str = resp.get_json()["error"]["message"]
    return message


def test_keystone_bad_token_and_spoofed_roles(
    keystone: tuple[FlaskClient, dict[str, str]],
) -> None:
    client, tokens = keystone
    resp = client.get("/v1/introspection", headers={"X-Auth-Token": "forged"})
    assert resp.status_code == 401
    assert "X-Auth-Token" in resp.get_json()["error"]["message"]
    assert resp.headers["X-OpenStack-Ironic-Inspector-API-Maximum-Version"]
    spoofed = client.get(
        "/v1/introspection",
        headers={"X-Roles": "admin", "X-Identity-Status": "Confirmed"},
    )
    assert spoofed.status_code == 401
    reader = client.post(
        f"/v1/introspection/{NODE}",
        headers={"X-Auth-Token": tokens["reader"], "X-Roles": "admin"},
    )
    assert reader.status_code == 403  # the token's roles, not the header's


@pytest.fixture
def htpasswd(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "htpasswd"
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4)).decode()
    path.write_text(f"# operators\nalice:{hashed}\nbob:plaintext-ignored\n")
    return path


def _basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


@pytest.fixture
def basic(
    service: Service, conf: cfg.ConfigOpts, htpasswd: pathlib.Path
) -> FlaskClient:
    conf.set_override("auth_strategy", "http_basic")
    conf.set_override("http_basic_auth_user_file", str(htpasswd))
    return create_app(service.rt).test_client()


@pytest.mark.parametrize("method,path,who", ENDPOINTS)
def test_http_basic_every_endpoint(
    basic: FlaskClient, method: str, path: str, who: str
) -> None:
    anonymous = _call(basic, method, path)
    if who == "public":
        assert anonymous.status_code not in (401, 403)
    else:
        assert anonymous.status_code == 401
        assert anonymous.headers["WWW-Authenticate"].startswith("Basic")
    resp = _call(basic, method, path, headers=_basic("alice", "s3cret"))
    assert resp.status_code not in (401, 403), resp.get_json()


@pytest.mark.parametrize(
    "headers",
    [
        _basic("alice", "wrong"),
        _basic("bob", "plaintext-ignored"),  # not a bcrypt line
        _basic("nobody", "s3cret"),
        {"Authorization": "Basic !!!not-base64"},
        {"Authorization": "Basic " + base64.b64encode(b"no-colon").decode()},
        {"Authorization": "Basic " + base64.b64encode(b"\xff\xfe:x").decode()},
        {"Authorization": "Bearer abc"},
        {"Authorization": ""},
        {"X-Roles": "admin", "X-Identity-Status": "Confirmed"},
    ],
)
def test_http_basic_refuses(basic: FlaskClient, headers: dict[str, str]) -> None:
    resp = basic.get("/v1/introspection", headers=headers)
    assert resp.status_code == 401
    assert resp.get_json()["error"]["message"].startswith("Authentication required")


def test_htpasswd_is_reread(basic: FlaskClient, htpasswd: pathlib.Path) -> None:
    assert basic.get("/v1/rules", headers=_basic("carol", "pw")).status_code == 401
    hashed = bcrypt.hashpw(b"pw", bcrypt.gensalt(rounds=4)).decode()
    # a line more: the file's size changes, whatever the clock's resolution
    htpasswd.write_text(htpasswd.read_text() + f"carol:{hashed}\n")
    assert basic.get("/v1/rules", headers=_basic("carol", "pw")).status_code == 200
    htpasswd.unlink()  # gone: the users loaded before stay
    assert basic.get("/v1/rules", headers=_basic("carol", "pw")).status_code == 200


def test_noauth_ignores_identity_headers(service: Service) -> None:
    client = create_app(service.rt).test_client()
    resp = client.get("/v1/rules", headers={"X-Roles": "nobody"})
    assert resp.status_code == 200  # noauth: everyone is an admin


def test_custom_policy_file_is_honoured(
    service: Service, conf: cfg.ConfigOpts, tmp_path: pathlib.Path
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text('"introspection:rule:get": "!"\n')
    conf.set_override("policy_file", str(policy), group="oslo_policy")
    access._enforcers.clear()
    try:
        client = create_app(service.rt).test_client()
        resp = client.get("/v1/rules")
        assert resp.status_code == 403
        assert "introspection:rule:get" in resp.get_json()["error"]["message"]
        assert client.get("/v1/introspection").status_code == 200
    finally:
        access._enforcers.clear()


def test_fast_status_path_checks_the_policy(
    keystone: tuple[FlaskClient, dict[str, str]], status_record: Any
) -> None:
    node = status_record("aa:bb:cc:dd:ee:01")
    client, tokens = keystone
    path = f"/v1/introspection/{node}"
    assert client.get(path).status_code == 401
    assert client.get(path, headers={"X-Auth-Token": tokens["none"]}).status_code == 403
    ok = client.get(path, headers={"X-Auth-Token": tokens["reader"]})
    assert ok.status_code == 200 and ok.get_json()["uuid"] == node
