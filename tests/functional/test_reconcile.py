"""Pending Ironic writes and the reconcile, with an Ironic that fails on cue."""

from collections.abc import Iterator
from typing import Any

import pytest

from inspector import exceptions, states
from inspector.conductor import reconcile
from tests.functional.conftest import Service, add_node, random_mac, start

V120 = {"X-OpenStack-Ironic-Inspector-API-Version": "1.20"}
DOWN = exceptions.BaremetalError(reason="cannot reach Ironic: connection refused")


@pytest.fixture(autouse=True)
def _healthy_ironic(service: Service) -> Iterator[None]:
    yield
    service.ironic.fail.clear()


def _to_waiting(service: Service) -> tuple[dict[str, Any], str]:
    node = add_node(service)
    return node, start(service, node)


def _post(service: Service, payload: Any, node: dict[str, Any]) -> str:
    mac = random_mac()
    resp = service.client.post(
        "/v1/continue", json=payload(mac, node["driver_info"]["ipmi_address"])
    )
    assert resp.status_code == 200
    return mac


def test_ironic_down_keeps_the_results_and_sync_makes_them(
    service: Service, payload: Any
) -> None:
    node, uuid = _to_waiting(service)
    service.ironic.fail["patch_node"] = DOWN
    service.ironic.fail["set_power_state"] = DOWN
    mac = _post(service, payload, node)
    status = service.wait_for(uuid, *states.FINAL)
    assert status["state"] == states.FINISHED and status["error"] is None
    pending = service.client.get(f"/v1/introspection/{uuid}", headers=V120).get_json()
    assert pending["pending_ironic_sync"] is True
    assert "connection refused" in pending["pending_ironic_sync_reason"]
    old = service.client.get(
        f"/v1/introspection/{uuid}",
        headers={"X-OpenStack-Ironic-Inspector-API-Version": "1.18"},
    )
    assert "pending_ironic_sync" not in old.get_json()  # only from 1.20
    assert not service.ironic.nodes[uuid]["properties"].get("cpus")
    data = service.client.get(f"/v1/introspection/{uuid}/data").get_json()
    assert data["cpus"]  # nothing processed was thrown away

    # still down: the reconcile reports the failure and keeps the debt
    report = reconcile.sync(service.rt, drift=False)
    assert [(f.node, f.kind) for f in report.findings if f.node == uuid] == [
        (uuid, "owed")
    ]
    assert [f.action for f in report.findings if f.node == uuid][0].startswith("failed")

    service.ironic.fail.clear()
    dry = reconcile.sync(service.rt, dry_run=True)
    assert ("owed", "would do") in {
        (f.kind, f.action) for f in dry.findings if f.node == uuid
    }
    assert not service.ironic.nodes[uuid]["properties"].get("cpus")  # dry run
    report = reconcile.sync(service.rt)
    assert ("owed", "done") in {
        (f.kind, f.action) for f in report.findings if f.node == uuid
    }
    ironic_node = service.ironic.nodes[uuid]
    assert ironic_node["properties"]["cpus"] == data["cpus"]
    assert ironic_node["power_state"] == "power off"
    assert [p["address"] for p in service.ironic.node_ports(uuid)] == [mac]
    done = service.client.get(f"/v1/introspection/{uuid}", headers=V120).get_json()
    assert done["pending_ironic_sync"] is False
    assert uuid not in {f.node for f in reconcile.sync(service.rt).findings}


def test_deleted_node_disappears(service: Service, payload: Any) -> None:
    node, uuid = _to_waiting(service)
    _post(service, payload, node)
    service.wait_for(uuid, *states.FINAL)
    del service.ironic.nodes[uuid]
    dry = reconcile.sync(service.rt, dry_run=True)
    assert (uuid, "deleted", "would do") in {
        (f.node, f.kind, f.action) for f in dry.findings
    }
    assert service.client.get(f"/v1/introspection/{uuid}").status_code == 200
    reconcile.sync(service.rt)
    assert service.client.get(f"/v1/introspection/{uuid}").status_code == 404


def test_drift_reported_then_repaired(service: Service, payload: Any) -> None:
    node, uuid = _to_waiting(service)
    mac = _post(service, payload, node)
    service.wait_for(uuid, *states.FINAL)
    ironic_node = service.ironic.nodes[uuid]
    cpus = ironic_node["properties"]["cpus"]
    ironic_node["properties"]["cpus"] = 1
    for port in service.ironic.node_ports(uuid):
        del service.ironic.ports[port["uuid"]]
    report = reconcile.sync(service.rt)
    (drift,) = [f for f in report.findings if f.node == uuid]
    assert drift.kind == "drift" and drift.action == "reported"
    assert f"cpus: ironic 1 != {cpus}" in drift.detail and mac in drift.detail
    assert ironic_node["properties"]["cpus"] == 1  # reported only
    reconcile.sync(service.rt, apply=True)
    assert ironic_node["properties"]["cpus"] == cpus
    assert [p["address"] for p in service.ironic.node_ports(uuid)] == [mac]
    assert uuid not in {f.node for f in reconcile.sync(service.rt).findings}


def test_unreachable_ironic_changes_nothing(service: Service, payload: Any) -> None:
    node, uuid = _to_waiting(service)
    _post(service, payload, node)
    service.wait_for(uuid, *states.FINAL)
    del service.ironic.nodes[uuid]
    service.ironic.fail["list_nodes"] = DOWN
    with pytest.raises(reconcile.IronicUnreachable, match="nothing was changed"):
        reconcile.sync(service.rt)
    assert service.client.get(f"/v1/introspection/{uuid}").status_code == 200


def test_report_renders(service: Service) -> None:
    report = reconcile.Report(dry_run=True)
    assert "agree" in report.as_table()
    report.add("n1", "drift", "cpus: ironic 1 != 8", "would do")
    table = report.as_table().splitlines()
    assert table[0].split() == ["node", "kind", "detail", "action"]
    assert "n1" in table[2] and "would do" in table[2]
    assert '"dry_run": true' in report.as_json()


def test_ironic_down_before_processing_is_processed_again(
    service: Service, payload: Any
) -> None:
    node, uuid = _to_waiting(service)
    service.ironic.fail["get_node"] = DOWN
    _post(service, payload, node)
    status = service.wait_for(uuid, *states.FINAL)
    assert status["state"] == states.FINISHED
    pending = service.client.get(f"/v1/introspection/{uuid}", headers=V120).get_json()
    assert pending["pending_ironic_sync"] is True
    service.ironic.fail.clear()
    report = reconcile.sync(service.rt, drift=False)
    (finding,) = [f for f in report.findings if f.node == uuid]
    assert finding.action == "done" and "processing again" in finding.detail
    assert service.ironic.nodes[uuid]["properties"]["cpus"]
    assert service.ironic.nodes[uuid]["power_state"] == "power off"
