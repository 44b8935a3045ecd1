"""A node's hardware history with a real Ironic and PostgreSQL: a machine
introspected, repaired and recabled, introspected again; its history and
changes read through the API (1.23), a drift rule's trait read back from
Ironic, and the leader's pruning keeping ``[history]keep_runs``."""

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from lab.machines import hardware, lldp
from lab.servers.inspector import InspectorServer
from lab.servers.ironic import IronicServer
from lab.servers.postgres import PostgresServer
from lab.waiting import wait_until
from tests.integration.conftest import Client, Lab, introspect, start_inspector

V123 = {"X-OpenStack-Ironic-Inspector-API-Version": "1.23"}
DATABASE = "hardware_history"


@pytest.fixture(scope="module")
def inspector(
    ironic: IronicServer,
    postgres: PostgresServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[InspectorServer]:
    postgres.create_database(DATABASE)
    server = start_inspector(
        tmp_path_factory.mktemp("inspector-history"),
        ironic,
        database_url=postgres.url.rsplit("/", 1)[0] + f"/{DATABASE}",
        options={
            # the record is kept whatever the data store
            "processing": {"store_data": "none"},
            "history": {"keep_runs": "2", "prune_interval": "1"},
        },
    )
    yield server
    assert server.stop() == 0, server.log_tail()


@pytest.fixture
def client(inspector: InspectorServer) -> Iterator[Client]:
    client = Client(inspector.url)
    yield client
    client.http.delete(client.url + "/v1/rules")


def _history(client: Client, uuid: str) -> list[dict[str, Any]]:
    resp = client.get(f"/v1/introspection/{uuid}/history", headers=V123)
    assert resp.status_code == 200, resp.text
    history: list[dict[str, Any]] = resp.json()["history"]
    return history


def test_a_repaired_and_recabled_machine(client: Client, lab: Lab) -> None:
    resp = client.post(
        "/v1/rules",
        json={
            "conditions": [
                {"op": "is-empty", "field": "data://hardware_changes", "invert": True}
            ],
            "actions": [{"action": "add-trait", "name": "CUSTOM_HARDWARE_CHANGED"}],
        },
    )
    assert resp.status_code == 201, resp.text
    machine, uuid = lab.machine()
    assert introspect(client, (machine, uuid))[0]["error"] is None
    assert "CUSTOM_HARDWARE_CHANGED" not in lab.api.node(uuid).get("traits", [])
    first = copy.deepcopy(machine.inventory)

    old, new = hardware.repair(machine)
    nic = machine.inventory["interfaces"][0]
    nic["lldp"] = lldp.encode(
        chassis_mac="88:5a:92:aa:00:00", port_id="Ethernet1/40", system_name="sw-x"
    )
    assert introspect(client, (machine, uuid))[0]["error"] is None

    history = _history(client, uuid)
    assert [(h["state"], h["changes"]) for h in history] == [
        ("finished", 4),  # two disks, the memory, the NIC
        ("finished", 0),
    ]
    resp = client.get(f"/v1/introspection/{uuid}/changes", headers=V123)
    changes = resp.json()["changes"]
    assert {c["run"] for c in changes} == {history[0]["uuid"]}
    mac = nic["mac_address"].lower()
    found = {(c["component"], c["kind"], c["field"]) for c in changes}
    assert {
        (f"disk:{old}", "removed", None),
        (f"disk:{new}", "added", None),
        ("memory", "changed", "total_mb"),
        (f"nic:{mac}", "changed", "switch_port_id"),
    } <= found
    memory = next(c for c in changes if c["component"] == "memory")
    assert memory["before"] == first["memory"]["physical_mb"]
    assert memory["after"] == machine.inventory["memory"]["physical_mb"]
    moved = next(c for c in changes if c["field"] == "switch_port_id")
    assert moved["after"] == "Ethernet1/40"
    # Ironic got the new memory, and the drift rule's trait
    node = lab.api.node(uuid)
    assert node["properties"]["memory_mb"] == machine.inventory["memory"]["physical_mb"]
    assert "CUSTOM_HARDWARE_CHANGED" in node["traits"]
    # below 1.23 the history is not there
    old_version = client.get(
        f"/v1/introspection/{uuid}/history",
        headers={"X-OpenStack-Ironic-Inspector-API-Version": "1.22"},
    )
    assert old_version.status_code == 404

    # a third run: the leader prunes the oldest (keep_runs = 2) within seconds
    introspect(client, (machine, uuid))
    wait_until(
        lambda: _history(client, uuid),
        20,
        "the pruning to keep 2 runs",
        until=lambda history: len(history) == 2,
    )
    assert history[1]["uuid"] not in {h["uuid"] for h in _history(client, uuid)}


class _ClientManager:
    """OpenStackClient's client manager, as far as the commands use it: a
    real keystone session (no authentication here) and --inspector-url."""

    def __init__(self, url: str) -> None:
        from keystoneauth1 import session

        self.session = session.Session()
        self._url = url

    def get_configuration(self) -> dict[str, str]:
        return {"inspector_url": self._url}


def test_openstack_commands_through_a_keystone_session(
    client: Client, lab: Lab
) -> None:
    import types

    from inspector.osc import history as osc

    machine, uuid = lab.machine()
    introspect(client, (machine, uuid))
    hardware.repair(machine)
    introspect(client, (machine, uuid))
    app = types.SimpleNamespace(client_manager=_ClientManager(client.url))

    def run(command: Any, *args: str) -> Any:
        cmd = command(app, None)
        parser = cmd.get_parser("openstack baremetal introspection")
        return cmd.take_action(parser.parse_args(list(args)))

    _columns, rows = run(osc.HistoryCommand, machine.name)
    assert [row[4] for row in rows] == [3, 0]
    _columns, rows = run(osc.ChangesCommand, uuid, "--limit", "3")
    assert sorted(row[3] for row in rows) == ["added", "changed", "removed"]
