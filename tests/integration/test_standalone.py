"""The ironic-inspector process against a real Ironic, on SQLite and PostgreSQL."""

import pathlib
import signal
from collections.abc import Iterator

import pytest

from inspector.api import versions
from lab.machines.enroll import IronicAPI
from lab.servers.inspector import InspectorServer
from lab.servers.ironic import IronicServer
from lab.servers.postgres import PostgresServer
from lab.waiting import wait_until
from tests.integration.conftest import Client, Lab, introspect, start_inspector

V = "X-OpenStack-Ironic-Inspector-API-Version"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def inspector(
    request: pytest.FixtureRequest,
    ironic: IronicServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[InspectorServer]:
    database_url = None
    if request.param == "postgresql":
        postgres: PostgresServer = request.getfixturevalue("postgres")
        postgres.recreate_database()
        database_url = postgres.url
    server = start_inspector(
        tmp_path_factory.mktemp(f"inspector-{request.param}"), ironic, database_url
    )
    yield server
    assert server.stop() == 0, server.log_tail()


@pytest.fixture
def client(inspector: InspectorServer) -> Client:
    return Client(inspector.url)


def wait_power(api: IronicAPI, uuid: str, state: str, timeout: float = 15) -> None:
    wait_until(
        lambda: api.node(uuid)["power_state"],
        timeout,
        f"node {uuid} to reach power state {state}",
        until=state.__eq__,
    )


def test_happy_path_writes_ironic(client: Client, lab: Lab) -> None:
    machine, uuid = lab.machine()
    introspect(client, (machine, uuid), until="waiting")
    wait_power(lab.api, uuid, "power on")
    resp = client.post("/v1/continue", json=machine.payload())
    assert resp.status_code == 200 and resp.json() == {"uuid": uuid}
    status = client.wait_for(uuid, "finished", "error")
    assert status["state"] == "finished", status
    node = lab.api.node(uuid)
    props = node["properties"]
    assert props["cpus"] == machine.cpus
    assert props["memory_mb"] == machine.memory_mb
    assert props["cpu_arch"] == machine.inventory["cpu"]["architecture"]
    assert props["local_gb"] == machine.smallest_disk_gib - 1
    assert "cpu_aes:true" in props["capabilities"]
    # [capabilities]boot_mode is off by default, as in ironic-inspector
    assert "boot_mode:" not in props["capabilities"]
    ports = lab.api.ports(uuid)
    assert [(p["address"], p["pxe_enabled"]) for p in ports] == [
        (machine.pxe_mac, True)
    ]
    wait_power(lab.api, uuid, "power off")
    data = client.get(f"/v1/introspection/{uuid}/data").json()
    assert data["cpus"] == machine.cpus
    assert set(data["all_interfaces"]) == {
        i["name"] for i in machine.inventory["interfaces"]
    }
    raw = client.get(f"/v1/introspection/{uuid}/data/unprocessed").json()
    assert raw["inventory"]["bmc_address"] == machine.bmc_address


def test_lookup_by_bmc_and_by_name(client: Client, lab: Lab) -> None:
    machine, uuid = lab.machine(enroll_port=False)
    assert client.post(f"/v1/introspection/{machine.name}").status_code == 202
    client.wait_for(machine.name, "waiting")
    assert client.post("/v1/continue", json=machine.payload()).json() == {"uuid": uuid}
    assert client.wait_for(uuid, "finished", "error")["state"] == "finished"


def test_manage_boot_false(client: Client, lab: Lab) -> None:
    node = lab.machine()
    machine, uuid = node
    introspect(client, node, query="?manage_boot=false", until="waiting")
    assert lab.api.node(uuid)["power_state"] in (None, "power off")
    client.post("/v1/continue", json=machine.payload())
    assert client.wait_for(uuid, "finished", "error")["state"] == "finished"
    assert lab.api.node(uuid)["power_state"] in (None, "power off")
    resp = client.post(f"/v1/introspection/{uuid}?manage_boot=perhaps")
    assert resp.status_code == 400


def test_abort(client: Client, lab: Lab) -> None:
    node = lab.machine()
    _machine, uuid = node
    introspect(client, node, until="waiting")
    wait_power(lab.api, uuid, "power on")
    assert client.post(f"/v1/introspection/{uuid}/abort").status_code == 202
    status = client.wait_for(uuid, "error")
    assert status["error"] == "Canceled by operator"
    wait_power(lab.api, uuid, "power off")


def test_unknown_mac_is_404(client: Client, lab: Lab) -> None:
    from lab.machines.hardware import unknown_machine

    resp = client.post("/v1/continue", json=unknown_machine(seed=3).payload())
    assert resp.status_code == 404
    assert "Could not find a node" in resp.json()["error"]["message"]


def test_invalid_transition_and_double_start(client: Client, lab: Lab) -> None:
    node = lab.machine()
    _machine, uuid = node
    introspect(client, node, until="waiting")
    # waiting -> start is a restart; the node stays under introspection
    (status,) = introspect(client, node)
    assert status["state"] == "finished", status
    resp = client.post(f"/v1/introspection/{uuid}/abort")
    assert resp.status_code == 400
    assert "no defined transition" in resp.json()["error"]["message"]
    assert client.get(f"/v1/introspection/{uuid}").json()["state"] == "finished"


def test_restart_from_error(client: Client, lab: Lab) -> None:
    node = lab.machine()
    machine, uuid = node
    payload = machine.payload()
    payload["error"] = "simulated ramdisk failure"
    (status,) = introspect(client, node, payload=payload)
    assert status["state"] == "error", status
    assert "Ramdisk reported error: simulated ramdisk failure" == status["error"]
    assert "cpus" not in lab.api.node(uuid)["properties"]
    (status,) = introspect(client, node)
    assert status["state"] == "finished", status
    assert status["error"] is None
    assert lab.api.node(uuid)["properties"]["cpus"] == machine.cpus


def test_pagination_and_filter(client: Client, lab: Lab) -> None:
    nodes = lab.machines(3)
    for node in nodes:  # one after the other: the listing is newest first
        introspect(client, node, until="waiting")
    uuids = [uuid for _machine, uuid in nodes]
    first = client.get("/v1/introspection?limit=2").json()["introspection"]
    assert len(first) == 2
    second = client.get(f"/v1/introspection?limit=2&marker={first[-1]['uuid']}")
    listed = [i["uuid"] for i in first + second.json()["introspection"]]
    assert listed[:3] == list(reversed(uuids))
    waiting = client.get("/v1/introspection?state=waiting&limit=0").json()
    assert set(uuids) <= {i["uuid"] for i in waiting["introspection"]}
    assert client.get("/v1/introspection?limit=5000").status_code == 400
    for uuid in uuids:
        assert client.post(f"/v1/introspection/{uuid}/abort").status_code == 202


def test_version_negotiation(client: Client) -> None:
    resp = client.get("/v1/introspection", headers={V: "1.0"})
    assert resp.status_code == 200  # what the stock client sends
    newest = versions.MAXIMUM
    assert resp.headers[
        "X-OpenStack-Ironic-Inspector-API-Maximum-Version"
    ] == versions.format_version(newest)
    beyond = versions.format_version((newest[0], newest[1] + 1))
    assert client.get("/", headers={V: beyond}).status_code == 406
    assert client.get("/", headers={V: "x"}).status_code == 400
    resp = client.get(
        "/", headers={"OpenStack-API-Version": "baremetal-introspection 1.10"}
    )
    assert resp.headers[V] == "1.10"


def test_unknown_node(client: Client) -> None:
    resp = client.post("/v1/introspection/3f2504e0-4f89-41d3-9a0c-0305e82c3301")
    assert resp.status_code == 404
    assert "not found in Ironic" in resp.json()["error"]["message"]
    assert client.post("/v1/introspection/no-such-name").status_code == 404


@pytest.fixture(scope="module")
def short_lived(
    ironic: IronicServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[InspectorServer]:
    """An inspector that keeps no data and times out after 3 s."""
    server = start_inspector(
        tmp_path_factory.mktemp("inspector-short"),
        ironic,
        options={
            "DEFAULT": {"timeout": "3", "clean_up_period": "1"},
            "processing": {"store_data": "none"},
        },
    )
    yield server
    server.stop()


def test_timeout(short_lived: InspectorServer, lab: Lab) -> None:
    client = Client(short_lived.url)
    node = lab.machine()
    _machine, uuid = node
    introspect(client, node, until="waiting")
    status = client.wait_for(uuid, "error", timeout=15)
    assert status["error"] == "Introspection timeout"
    wait_power(lab.api, uuid, "power off")


def test_store_data_none(short_lived: InspectorServer, lab: Lab) -> None:
    client = Client(short_lived.url)
    node = lab.machine()
    _machine, uuid = node
    (status,) = introspect(client, node)
    assert status["state"] == "finished", status
    resp = client.get(f"/v1/introspection/{uuid}/data")
    assert resp.status_code == 404
    assert "store_data" in resp.json()["error"]["message"]


def _wait_log(server: InspectorServer, text: str) -> None:
    wait_until(
        lambda: server.log_tail(50000),
        10,
        f"{text!r} in the log",
        until=lambda log: text in log,
        interval=0.1,
    )


_FIRST = "6b0f6c8e-1c1d-4f7e-9d1a-000000000001"
_SECOND = "6b0f6c8e-1c1d-4f7e-9d1a-000000000002"
_BUILT_IN = (
    "- {{uuid: {uuid}, actions: [{{op: add-trait, args: [CUSTOM_BUILT_IN]}}]}}\n"
)


def _built_in_uuids(client: Client) -> list[str]:
    rules = client.get("/v1/rules").json()["rules"]
    return [r["uuid"] for r in rules if r["built_in"]]


def test_sigterm_stops_cleanly_and_sighup_reloads(
    ironic: IronicServer, tmp_path: pathlib.Path
) -> None:
    built_in = tmp_path / "built-in-rules.yaml"
    built_in.write_text(_BUILT_IN.format(uuid=_FIRST))
    server = start_inspector(
        tmp_path, ironic, options={"rules": {"built_in_rules": str(built_in)}}
    )
    client = Client(server.url)
    try:
        assert _built_in_uuids(client) == [_FIRST]
        assert client.get("/v1/introspection?limit=2").status_code == 200
        original = server.config_file.read_text()
        server.config_file.write_text(
            original.replace("[DEFAULT]", "[DEFAULT]\napi_max_limit = 1")
        )
        server.signal(signal.SIGHUP)
        _wait_log(server, "Configuration reloaded")
        resp = client.get("/v1/introspection?limit=2")
        assert resp.status_code == 400
        assert "the maximum is 1" in resp.json()["error"]["message"]

        # an invalid value is rejected as a whole: the running values stay
        server.config_file.write_text(
            original.replace("[DEFAULT]", "[DEFAULT]\napi_max_limit = 50")
            + "\n[processing]\nstore_data = bogus\n"
        )
        server.signal(signal.SIGHUP)
        _wait_log(server, "Configuration reload rejected")
        assert "store_data" in server.log_tail(50000)
        assert client.get("/v1/introspection?limit=2").status_code == 400
        assert client.get("/v1/introspection?limit=1").status_code == 200

        # [rules]built_in_rules: an invalid file is logged, the rules stay;
        # a valid one replaces them
        built_in.write_text("- {description: broken, actions: [{op: nope}]}\n")
        server.signal(signal.SIGHUP)
        _wait_log(server, "the 1 built-in rule(s) loaded before stay")
        assert "rule 0 (broken): actions[0].op" in server.log_tail(50000)
        assert _built_in_uuids(client) == [_FIRST]
        built_in.write_text(_BUILT_IN.format(uuid=_SECOND))
        server.signal(signal.SIGHUP)
        wait_until(
            lambda: _built_in_uuids(client),
            10,
            "the new built-in rules",
            until=lambda found: found == [_SECOND],
            interval=0.1,
        )
    finally:
        code = server.stop()
    assert code == 0, server.log_tail()
    assert "ironic-inspector stopped" in server.log_tail(20000)
