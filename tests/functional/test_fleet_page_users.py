"""The /fleet pages in a browser under auth_strategy = keystone (issue 50
item 4): the users of [fleet_page]user_file read the pages with HTTP
basic credentials, with the roles of [fleet_page]roles in the API's
policy, and nothing else; a token works as before."""

import base64
import pathlib
from collections.abc import Iterator

import bcrypt
import pytest
from flask.testing import FlaskClient
from keystonemiddleware import auth_token
from keystonemiddleware import fixture as ks_fixture
from oslo_config import cfg

from inspector import exceptions
from inspector.api import access
from inspector.api.app import create_app
from lab.machines import fleet_rows
from tests.functional.conftest import Service


def _basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


ALICE = _basic("alice", "s3cret")


def _keystone(conf: cfg.ConfigOpts) -> None:
    conf.set_override("auth_strategy", "keystone")
    for group, options in auth_token.list_opts():
        conf.register_opts(options, group=group)
    conf.set_override(
        "www_authenticate_uri",
        "http://keystone.example/identity",
        group="keystone_authtoken",
    )


@pytest.fixture
def pages(
    service: Service, conf: cfg.ConfigOpts, tmp_path: pathlib.Path
) -> Iterator[tuple[FlaskClient, str]]:
    """A keystone service with a page user, alice; a node with a record;
    the client and the node."""
    users = tmp_path / "fleet-users"
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4)).decode()
    users.write_text(f"alice:{hashed}\n")
    _keystone(conf)
    conf.set_override("user_file", str(users), group="fleet_page")
    tokens = ks_fixture.AuthTokenFixture()
    tokens.setUp()
    tokens.add_token_data(
        token_id="token-reader", role_list=["reader"], project_id="p1", user_id="r"
    )
    node = str(service.ironic.add_node()["uuid"])
    record = fleet_rows.machine(product="Model page-users")
    fleet_rows.insert(service.rt.db, [fleet_rows.run_row(node, record, name="pu-1")])
    access._enforcers.clear()
    yield create_app(service.rt).test_client(), node
    access._enforcers.clear()
    tokens.cleanUp()


def test_a_page_user_reads_the_pages(pages: tuple[FlaskClient, str]) -> None:
    client, node = pages
    anonymous = client.get("/fleet")
    assert anonymous.status_code == 401
    # the browser's prompt for credentials
    assert anonymous.headers["WWW-Authenticate"].startswith('Basic realm="')
    assert client.get("/fleet", headers=_basic("alice", "wrong")).status_code == 401
    for path in ("/fleet", "/fleet/nodes", f"/fleet/nodes/{node}", "/fleet/changes"):
        assert client.get(path, headers=ALICE).status_code == 200, path
    # the status a node's page links to
    status = client.get(f"/v1/introspection/{node}", headers=ALICE)
    assert status.status_code not in (401, 403), status.get_json()
    # a token still works, and the API still wants one
    assert (
        client.get("/fleet", headers={"X-Auth-Token": "token-reader"}).status_code
        == 200
    )
    assert client.get("/v1/inventory").status_code == 401


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/rules"),
        ("GET", "/v1/inventory"),
        ("GET", "/v1/introspection"),
        ("GET", "/v1/introspection/{node}/data"),
        ("POST", "/v1/introspection/{node}"),
        ("POST", "/v1/introspection/{node}/abort"),
        ("DELETE", "/v1/rules"),
    ],
)
def test_a_page_user_can_do_nothing_else(
    pages: tuple[FlaskClient, str], method: str, path: str
) -> None:
    client, node = pages
    resp = client.open(path.format(node=node), method=method, headers=ALICE)
    assert resp.status_code == 401, resp.get_json()
    assert "X-Auth-Token" in resp.get_json()["error"]["message"]


def test_a_page_user_has_the_configured_roles_in_the_policy(
    pages: tuple[FlaskClient, str], conf: cfg.ConfigOpts, tmp_path: pathlib.Path
) -> None:
    client, _node = pages
    # the page user's claimed roles are not taken
    spoofed = client.get("/fleet", headers={**ALICE, "X-Roles": "admin"})
    assert spoofed.status_code == 200
    policy = tmp_path / "policy.yaml"
    policy.write_text('"introspection:inventory:get": "role:admin"\n')
    conf.set_override("policy_file", str(policy), group="oslo_policy")
    access._enforcers.clear()
    denied = client.get("/fleet", headers={**ALICE, "X-Roles": "admin"})
    assert denied.status_code == 403
    assert "introspection:inventory:get" in denied.get_data(as_text=True)
    assert "roles: reader" in denied.get_data(as_text=True)
    conf.set_override("roles", ["admin"], group="fleet_page")
    allowed = create_app(client.application.config["RUNTIME"]).test_client()
    assert allowed.get("/fleet", headers=ALICE).status_code == 200
    # still only reads
    assert allowed.post("/v1/rules", headers=ALICE, json={}).status_code == 401


def test_a_missing_user_file_stops_the_start(
    service: Service, conf: cfg.ConfigOpts, tmp_path: pathlib.Path
) -> None:
    _keystone(conf)
    conf.set_override("user_file", str(tmp_path / "nowhere"), group="fleet_page")
    with pytest.raises(exceptions.ConfigError, match=r"\[fleet_page\]user_file"):
        create_app(service.rt)
