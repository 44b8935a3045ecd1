"""A node's hardware history through the API (1.23), in the standalone
shape: runs recorded by the processing step, changes between them, rules
acting on drift, and what recording costs the step."""

import importlib.metadata
import json
import pathlib
import threading
import types
from collections.abc import Iterator
from typing import Any

import prometheus_client
import pytest
import sqlalchemy as sa

from inspector import exceptions, states
from inspector.osc import history as osc_history
from tests.functional.conftest import (
    Service,
    add_node,
    build_payload,
    database_conf,
    introspect,
    random_mac,
    run_script,
)

V123 = {"X-OpenStack-Ironic-Inspector-API-Version": "1.23"}
V122 = {"X-OpenStack-Ironic-Inspector-API-Version": "1.22"}
NEW_DISK = "S3EVNX0K123456"
DRIFT_RULE = {
    "description": "mark drifted nodes",
    "conditions": [
        {"op": "is-empty", "field": "data://hardware_changes", "invert": True}
    ],
    "actions": [{"action": "add-trait", "name": "CUSTOM_HARDWARE_CHANGED"}],
}


@pytest.fixture(autouse=True)
def _clean(service: Service) -> Iterator[None]:
    yield
    service.client.delete("/v1/rules")
    service.ironic.fail.clear()


def _payload(node: dict[str, Any], mac: str) -> dict[str, Any]:
    return build_payload(mac, node["driver_info"]["ipmi_address"])


def _drifted(data: dict[str, Any]) -> dict[str, Any]:
    """The same machine with its first disk swapped and less memory."""
    disk = data["inventory"]["disks"][0]
    disk.update(serial=NEW_DISK, wwn="0x5000c500a1b2c3d4")
    data["root_disk"] = dict(disk)
    data["inventory"]["memory"]["physical_mb"] = 262144
    return data


def _get(service: Service, path: str, **query: Any) -> Any:
    resp = service.client.get(path, headers=V123, query_string=query)
    assert resp.status_code == 200, resp.get_json()
    return resp.get_json()


def _twice(service: Service) -> tuple[str, dict[str, Any]]:
    """A node introspected, then again with a swapped disk and less memory."""
    node = add_node(service)
    mac = random_mac()
    assert introspect(service, node, data=_payload(node, mac))["error"] is None
    again = introspect(service, node, data=_drifted(_payload(node, mac)))
    assert again["error"] is None, again
    return node["uuid"], node


def _counted(kind: str) -> float:
    value = prometheus_client.REGISTRY.get_sample_value(
        "ironic_inspector_hardware_changes_total", {"kind": kind}
    )
    return value or 0.0


def test_history_and_changes_of_a_swapped_disk_and_less_memory(
    service: Service,
) -> None:
    before = {kind: _counted(kind) for kind in ("added", "removed", "changed")}
    uuid, node = _twice(service)
    counted = {kind: _counted(kind) - before[kind] for kind in before}
    assert counted == {"added": 1, "removed": 1, "changed": 1}
    history = _get(service, f"/v1/introspection/{uuid}/history")["history"]
    assert [h["state"] for h in history] == ["finished", "finished"]
    assert [h["changes"] for h in history] == [3, 0]  # two disks, memory
    assert history[0]["finished_at"] > history[1]["finished_at"]
    assert all(
        set(h)
        == {
            "uuid",
            "started_at",
            "finished_at",
            "state",
            "error",
            "changes",
            "source",
            "interface",
        }
        for h in history
    )
    assert {(h["source"], h["interface"]) for h in history} == {("inspector", None)}
    changes = _get(service, f"/v1/introspection/{uuid}/changes")["changes"]
    summary = sorted((c["component"], c["kind"], c["field"]) for c in changes)
    assert summary == [
        ("disk:0011000000abcdef", "removed", None),
        (f"disk:{NEW_DISK}", "added", None),
        ("memory", "changed", "total_mb"),
    ]
    memory = next(c for c in changes if c["component"] == "memory")
    assert (memory["before"], memory["after"]) == (393216, 262144)
    assert {c["run"] for c in changes} == {history[0]["uuid"]}
    assert {c["finished_at"] for c in changes} == {history[0]["finished_at"]}
    # by name too, and a page of one after the newest
    page = _get(
        service,
        f"/v1/introspection/{node['name']}/history",
        limit=1,
        marker=history[0]["uuid"],
    )["history"]
    assert [h["uuid"] for h in page] == [history[1]["uuid"]]
    assert _get(
        service, f"/v1/introspection/{uuid}/changes", marker=history[0]["uuid"]
    ) == {"changes": []}


def test_rules_see_the_changes(service: Service) -> None:
    resp = service.client.post("/v1/rules", json=DRIFT_RULE)
    assert resp.status_code in (200, 201), resp.get_json()
    node = add_node(service)
    mac = random_mac()
    introspect(service, node, data=_payload(node, mac))
    assert "CUSTOM_HARDWARE_CHANGED" not in service.ironic.nodes[node["uuid"]].get(
        "traits", []
    )
    introspect(service, node, data=_drifted(_payload(node, mac)))
    assert "CUSTOM_HARDWARE_CHANGED" in service.ironic.nodes[node["uuid"]]["traits"]
    data = _get(service, f"/v1/introspection/{node['uuid']}/data")
    assert len(data["hardware_changes"]) == 3


def test_a_failed_run_is_in_the_history_and_changes_skip_it(
    service: Service,
) -> None:
    node = add_node(service)
    mac = random_mac()
    introspect(service, node, data=_payload(node, mac))
    rule = {
        "conditions": [{"op": "eq", "field": "memory_mb", "value": 262144}],
        "actions": [{"action": "fail", "message": "memory shrank"}],
    }
    service.client.post("/v1/rules", json=rule)
    failed = introspect(service, node, data=_drifted(_payload(node, mac)))
    assert "memory shrank" in failed["error"]
    service.client.delete("/v1/rules")
    introspect(service, node, data=_drifted(_payload(node, mac)))
    uuid = node["uuid"]
    history = _get(service, f"/v1/introspection/{uuid}/history")["history"]
    assert [(h["state"], h["changes"]) for h in history] == [
        ("finished", 3),  # against the first run, not the failed one
        ("error", 0),
        ("finished", 0),
    ]
    assert "memory shrank" in history[1]["error"]


def test_reapply_is_a_run_and_store_none_keeps_the_history(
    service: Service, conf: Any
) -> None:
    node = add_node(service)
    introspect(service, node)
    uuid = node["uuid"]
    resp = service.client.post(f"/v1/introspection/{uuid}/data/unprocessed")
    assert resp.status_code == 202, resp.get_json()
    service.wait_for(uuid, *states.FINAL)
    history = _get(service, f"/v1/introspection/{uuid}/history")["history"]
    assert len(history) == 2 and history[0]["state"] == "finished"
    # the reapply's run started when it was taken up, after the first ended
    assert history[0]["started_at"] > history[1]["finished_at"]
    conf.set_override("store_data", "none", group="processing")
    introspect(service, node)
    assert len(_get(service, f"/v1/introspection/{uuid}/history")["history"]) == 3
    # a new MAC on the first NIC each time: the NICs changed, the rest not
    changes = _get(service, f"/v1/introspection/{uuid}/changes")["changes"]
    assert {c["component"].split(":")[0] for c in changes} == {"nic"}


def test_owed_writes_still_record_the_run(service: Service) -> None:
    node = add_node(service)
    mac = random_mac()
    introspect(service, node, data=_payload(node, mac))
    service.ironic.fail["patch_node"] = exceptions.BaremetalError(reason="away")
    done = introspect(service, node, data=_drifted(_payload(node, mac)))
    assert done["state"] == states.FINISHED
    history = _get(service, f"/v1/introspection/{node['uuid']}/history")["history"]
    assert history[0]["changes"] == 3


def test_bad_requests_name_the_problem(service: Service) -> None:
    uuid, _node = _twice(service)
    path = f"/v1/introspection/{uuid}/history"
    old = service.client.get(path, headers=V122)
    assert old.status_code == 404
    assert "needs version 1.23" in old.get_json()["error"]["message"]
    for query, word in (
        ({"limit": "x"}, "limit"),
        ({"limit": -1}, "limit"),
        ({"limit": 10**6}, "limit"),
        ({"marker": "nope"}, "marker"),
        ({"marker": "11111111-2222-4333-8444-555555555555"}, "marker"),
    ):
        for what in ("history", "changes"):
            resp = service.client.get(
                f"/v1/introspection/{uuid}/{what}", headers=V123, query_string=query
            )
            assert resp.status_code == 400, (query, resp.get_json())
            assert word in resp.get_json()["error"]["message"]
    never = add_node(service)
    for what in ("history", "changes"):
        resp = service.client.get(
            f"/v1/introspection/{never['uuid']}/{what}", headers=V123
        )
        assert resp.status_code == 404
        assert never["uuid"] in resp.get_json()["error"]["message"]


def test_recording_costs_the_processing_step_two_statements(
    service: Service,
) -> None:
    """One SELECT of the previous record, one INSERT of the run: nothing
    else of the step's statements touches the history."""
    node = add_node(service)
    mac = random_mac()
    introspect(service, node, data=_payload(node, mac))
    seen: list[str] = []
    test_thread = threading.current_thread()

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if threading.current_thread() is not test_thread:
            seen.append(statement)

    sa.event.listen(service.rt.db.engine, "before_cursor_execute", record)
    try:
        introspect(service, node, data=_drifted(_payload(node, mac)))
    finally:
        sa.event.remove(service.rt.db.engine, "before_cursor_execute", record)
    touching = [s.split()[0] for s in seen if "hardware_runs" in s]
    assert touching == ["SELECT", "INSERT"], touching


def test_manage_history_and_changes(service: Service, tmp_path: pathlib.Path) -> None:
    uuid, node = _twice(service)
    conf = database_conf(service)

    def manage(*args: str) -> Any:
        return run_script(tmp_path, "ironic-inspector-manage", conf, *args)

    shown = manage("history", node["name"], "--json")
    assert shown.returncode == 0, shown.stderr
    api = _get(service, f"/v1/introspection/{uuid}/history")["history"]
    assert json.loads(shown.stdout) == api
    table = manage("changes", uuid, "--limit", "3")
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].split()[:5] == ["run", "finished_at", "component", "kind", "field"]
    assert len(lines) == 2 + 3 and "total_mb" in table.stdout
    as_json = json.loads(manage("changes", uuid, "--json").stdout)
    assert as_json == _get(service, f"/v1/introspection/{uuid}/changes")["changes"]
    never = manage("history", "11111111-2222-4333-8444-555555555555")
    assert never.returncode == 1 and "11111111-2222" in never.stderr
    bad = manage("changes", uuid, "--limit", "-1")
    assert bad.returncode == 2 and "--limit: -1" in bad.stderr


class ClientManager:
    """What OpenStackClient's client manager gives the commands: its
    configuration and keystone session; the session here is the service's
    Flask client, so the API answering is the real one."""

    def __init__(self, service: Service) -> None:
        self.session = self
        self._client = service.client

    def get_configuration(self) -> dict[str, str]:
        return {"inspector_url": "http://inspector.test:5050/"}

    def get(self, url: str, **kwargs: Any) -> Any:
        assert url.startswith("http://inspector.test:5050/v1/")
        assert kwargs.pop("raise_exc") is False
        resp = self._client.get(
            url.removeprefix("http://inspector.test:5050"),
            headers=kwargs["headers"],
            query_string=kwargs["params"],
        )
        return types.SimpleNamespace(
            status_code=resp.status_code, json=resp.get_json, text=resp.text
        )


def osc_entry_points(module: str) -> dict[str, Any]:
    """The stock client's commands that ``module`` of ours registers."""
    group = importlib.metadata.entry_points(
        group="openstack.baremetal_introspection.v1"
    )
    return {e.name: e.load() for e in group if e.value.startswith(module)}


def run_osc(service: Service, command: Any, *args: str) -> Any:
    """One OpenStackClient command's answer (columns, rows), its requests
    answered by the service's API."""
    app = types.SimpleNamespace(client_manager=ClientManager(service))
    cmd = command(app, None)
    parsed = cmd.get_parser("openstack baremetal introspection").parse_args(list(args))
    return cmd.take_action(parsed)


def test_openstack_client_commands(service: Service) -> None:
    assert osc_entry_points("inspector.osc.history") == {
        "baremetal_introspection_history": osc_history.HistoryCommand,
        "baremetal_introspection_changes": osc_history.ChangesCommand,
    }
    uuid, node = _twice(service)

    def run(command: Any, *args: str) -> Any:
        return run_osc(service, command, *args)

    columns, rows = run(osc_history.HistoryCommand, node["name"])
    assert columns[0] == "UUID" and [r[3] for r in rows] == ["finished"] * 2
    assert [r[4] for r in rows] == [3, 0]
    columns, rows = run(osc_history.ChangesCommand, uuid, "--limit", "10")
    assert columns[2] == "Component" and len(rows) == 3
    assert {r[2] for r in rows} >= {"memory"}
    with pytest.raises(RuntimeError, match="404"):
        run(osc_history.HistoryCommand, "11111111-2222-4333-8444-555555555555")
