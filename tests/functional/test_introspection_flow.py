"""Start -> ramdisk -> processing -> finished, and the ways it can go wrong."""

import logging
import threading
import time
from typing import Any

import pytest

from inspector import exceptions, states
from inspector.db import introspections, models
from inspector.intake.operator import LOCK_GRACE
from lab.waiting import wait_until
from tests.functional.conftest import Service, introspect, random_mac, start


def test_happy_path_updates_ironic(
    service: Service, node: dict[str, Any], payload: Any
) -> None:
    uuid = node["uuid"]
    mac = random_mac()
    resp = service.client.post(f"/v1/introspection/{uuid}")
    assert resp.status_code == 202, resp.get_json()
    assert resp.get_json() == {}
    service.wait_for(uuid, states.WAITING)
    assert ("set_boot_device", uuid) in service.ironic.calls
    assert service.ironic.nodes[uuid]["power_state"] == "power on"

    data = payload(mac, node["driver_info"]["ipmi_address"])
    resp = service.client.post("/v1/continue", json=data)
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json() == {"uuid": uuid}

    status = service.wait_for(uuid, *states.FINAL)
    assert status["state"] == states.FINISHED, status
    assert status["finished"] is True and status["error"] is None
    assert status["finished_at"] is not None
    props = service.ironic.nodes[uuid]["properties"]
    assert props["cpus"] == 80
    assert props["memory_mb"] == 393216
    assert props["cpu_arch"] == "x86_64"
    assert props["local_gb"] > 0
    ports = service.ironic.node_ports(uuid)
    assert [p["address"] for p in ports] == [mac]
    assert ports[0]["pxe_enabled"] is True
    assert service.ironic.nodes[uuid]["power_state"] == "power off"

    processed = service.client.get(f"/v1/introspection/{uuid}/data").get_json()
    assert processed["inventory"]["cpu"]["count"] == 80
    raw = service.client.get(f"/v1/introspection/{uuid}/data/unprocessed").get_json()
    assert raw["inventory"]["bmc_address"] == node["driver_info"]["ipmi_address"]


def test_lookup_by_port_mac(service: Service, payload: Any) -> None:
    mac = random_mac()
    node = service.ironic.add_node(macs=(mac,))
    uuid = start(service, node)
    resp = service.client.post("/v1/continue", json=payload(mac, "203.0.113.250"))
    assert resp.get_json() == {"uuid": uuid}
    assert service.wait_for(uuid, *states.FINAL)["state"] == states.FINISHED


def test_start_by_name(service: Service, node: dict[str, Any]) -> None:
    resp = service.client.post(f"/v1/introspection/{node['name']}")
    assert resp.status_code == 202
    status = service.wait_for(node["name"], states.WAITING)
    assert status["uuid"] == node["uuid"]


def test_names_at_1_0(service: Service, node: dict[str, Any]) -> None:
    """The stock client sends 1.0 and node names; both are fine."""
    resp = service.client.post(
        f"/v1/introspection/{node['name']}",
        headers={"X-OpenStack-Ironic-Inspector-API-Version": "1.0"},
    )
    assert resp.status_code == 202, resp.get_json()
    resp = service.client.get(
        f"/v1/introspection/{node['name']}",
        headers={"X-OpenStack-Ironic-Inspector-API-Version": "1.0"},
    )
    assert resp.status_code == 200 and resp.get_json()["uuid"] == node["uuid"]


def test_manage_boot_false_leaves_power_alone(
    service: Service, node: dict[str, Any]
) -> None:
    uuid = node["uuid"]
    assert introspect(service, node, manage_boot=False)["state"] == states.FINISHED
    calls = {c for c, target in service.ironic.calls if target == uuid}
    assert "set_power_state" not in calls and "set_boot_device" not in calls


@pytest.mark.parametrize("value", ["maybe", "2", ""])
def test_manage_boot_invalid(
    service: Service, node: dict[str, Any], value: str
) -> None:
    resp = service.client.post(f"/v1/introspection/{node['uuid']}?manage_boot={value}")
    assert resp.status_code == 400
    assert "manage_boot" in resp.get_json()["error"]["message"]
    assert service.client.get(f"/v1/introspection/{node['uuid']}").status_code == 404


def test_manage_boot_refused_when_not_allowed(
    service: Service, conf: Any, node: dict[str, Any]
) -> None:
    conf.set_override("can_manage_boot", False)
    resp = service.client.post(f"/v1/introspection/{node['uuid']}")
    assert resp.status_code == 400
    assert "can_manage_boot" in resp.get_json()["error"]["message"]
    resp = service.client.post(f"/v1/introspection/{node['uuid']}?manage_boot=0")
    assert resp.status_code == 202


def test_abort_waiting(service: Service, node: dict[str, Any]) -> None:
    uuid = start(service, node)
    resp = service.client.post(f"/v1/introspection/{uuid}/abort")
    assert resp.status_code == 202
    status = service.wait_for(uuid, *states.FINAL)
    assert status["state"] == states.ERROR
    assert status["error"] == "Canceled by operator"
    assert service.ironic.nodes[uuid]["power_state"] == "power off"


def test_abort_finished_is_invalid(service: Service, node: dict[str, Any]) -> None:
    uuid = node["uuid"]
    assert introspect(service, node, manage_boot=False)["state"] == states.FINISHED
    resp = service.client.post(f"/v1/introspection/{uuid}/abort")
    assert resp.status_code == 400
    message = resp.get_json()["error"]["message"]
    assert "no defined transition" in message
    assert (
        service.client.get(f"/v1/introspection/{uuid}").get_json()["state"]
        == states.FINISHED
    )


def test_abort_unknown(service: Service) -> None:
    resp = service.client.post(
        "/v1/introspection/0b0b0b0b-0000-4000-8000-000000000000/abort"
    )
    assert resp.status_code == 404


def test_abort_locked(service: Service, node: dict[str, Any]) -> None:
    uuid = start(service, node)
    lock = service.rt.locks.get_lock(uuid)
    assert lock.acquire()
    try:
        resp = service.client.post(f"/v1/introspection/{uuid}/abort")
        assert resp.status_code == 409
        assert resp.get_json()["error"]["message"] == (
            f"Node {uuid} is locked by another operation, please retry later"
        )
    finally:
        lock.release()


def _locked_node(service: Service, node: dict[str, Any], action: str) -> str:
    """The node ready for ``action``; the path to POST for it."""
    uuid = node["uuid"]
    if action == "abort":
        start(service, node)
        return f"/v1/introspection/{uuid}/abort"
    assert introspect(service, node, manage_boot=False)["state"] == states.FINISHED
    if action == "start":  # again, from finished
        return f"/v1/introspection/{uuid}"
    return f"/v1/introspection/{uuid}/data/unprocessed"


@pytest.mark.parametrize(
    "action,outcome",
    [
        ("abort", states.ERROR),
        ("reapply", states.FINISHED),
        ("start", states.WAITING),
    ],
)
def test_lock_let_go_within_the_grace_is_waited_for(
    service: Service, node: dict[str, Any], action: str, outcome: str
) -> None:
    """Work that is just finishing holds the node lock a moment longer: a
    start, an abort and a reapply wait for it (up to LOCK_GRACE) instead of
    answering 409."""
    path = _locked_node(service, node, action)
    lock = service.rt.locks.get_lock(node["uuid"])
    assert lock.acquire(timeout=5)  # the conductor may still be letting go
    releaser = threading.Timer(0.3, lock.release)
    releaser.start()
    try:
        started = time.monotonic()
        resp = service.client.post(path)
        took = time.monotonic() - started
    finally:
        releaser.join()
    assert resp.status_code == 202, resp.get_json()
    assert took >= 0.25, took  # it waited for the lock (202: within the grace)
    assert service.wait_for(node["uuid"], outcome)["state"] == outcome


@pytest.mark.parametrize("action", ["abort", "reapply", "start"])
def test_lock_held_past_the_grace_is_409(
    service: Service, node: dict[str, Any], action: str
) -> None:
    path = _locked_node(service, node, action)
    uuid = node["uuid"]
    before = introspections.get(service.rt.db, uuid)
    lock = service.rt.locks.get_lock(uuid)
    assert lock.acquire(timeout=5)
    try:
        started = time.monotonic()
        resp = service.client.post(path)
        took = time.monotonic() - started
    finally:
        lock.release()
    assert resp.status_code == 409, resp.get_json()
    assert "locked" in resp.get_json()["error"]["message"]
    assert took >= LOCK_GRACE - 0.05, took  # refused only after the grace
    after = introspections.get(service.rt.db, uuid)
    assert (after.state, after.version) == (before.state, before.version)


def test_timeout(service: Service, node: dict[str, Any], conf: Any) -> None:
    uuid = start(service, node)
    with service.rt.db.session() as session:
        row = session.get(models.Introspection, uuid)
        assert row is not None
        row.started_at = introspections.utcnow().replace(year=2000)
    conf.set_override("timeout", 60)
    assert service.conductor.manager.check_timeouts() >= 1
    status = service.client.get(f"/v1/introspection/{uuid}").get_json()
    assert status["state"] == states.ERROR
    assert status["error"] == "Introspection timeout"
    assert service.ironic.nodes[uuid]["power_state"] == "power off"


def test_double_start_while_starting_is_refused(
    service: Service, node: dict[str, Any]
) -> None:
    uuid = node["uuid"]
    lock = service.rt.locks.get_lock(uuid)
    # hold the node so the first start stays in "starting"
    service.ironic.fail.clear()
    assert service.client.post(f"/v1/introspection/{uuid}").status_code == 202
    assert lock.acquire(timeout=5)
    try:
        record = introspections.get(service.rt.db, uuid)
        if record.state == states.STARTING:
            resp = service.client.post(f"/v1/introspection/{uuid}")
            assert resp.status_code == 409
    finally:
        lock.release()
    service.wait_for(uuid, states.WAITING)
    # waiting -> start is allowed by the state machine: a restart
    assert service.client.post(f"/v1/introspection/{uuid}").status_code == 202
    service.wait_for(uuid, states.WAITING)


def test_restart_from_error(service: Service, node: dict[str, Any]) -> None:
    uuid = node["uuid"]
    service.ironic.fail["set_power_state"] = exceptions.BaremetalError(
        reason="BMC unreachable"
    )
    try:
        service.client.post(f"/v1/introspection/{uuid}")
        status = service.wait_for(uuid, *states.FINAL)
    finally:
        service.ironic.fail.clear()
    assert status["state"] == states.ERROR
    assert "Failed to power on the node" in status["error"]
    assert "BMC unreachable" in status["error"]
    status = introspect(service, node)
    assert status["state"] == states.FINISHED and status["error"] is None


def test_ramdisk_error_ends_in_error(
    service: Service, node: dict[str, Any], payload: Any
) -> None:
    uuid = node["uuid"]
    data = payload(random_mac(), node["driver_info"]["ipmi_address"])
    data["error"] = "disk controller on fire"
    status = introspect(service, node, data=data)
    assert status["state"] == states.ERROR
    assert "disk controller on fire" in status["error"]
    assert "cpus" not in service.ironic.nodes[uuid]["properties"]


def test_unknown_mac_is_404(service: Service, payload: Any) -> None:
    resp = service.client.post("/v1/continue", json=payload(random_mac(), "198.18.0.1"))
    assert resp.status_code == 404
    assert "Could not find a node" in resp.get_json()["error"]["message"]


def test_post_for_finished_node_changes_nothing(
    service: Service, node: dict[str, Any], payload: Any
) -> None:
    uuid = node["uuid"]
    bmc = node["driver_info"]["ipmi_address"]
    mac = random_mac()
    status = introspect(service, node, manage_boot=False, data=payload(mac, bmc))
    assert status["state"] == states.FINISHED, status
    before = service.client.get(f"/v1/introspection/{uuid}/data/unprocessed").get_json()
    evil = payload(mac, bmc)
    evil["inventory"]["cpu"]["count"] = 1
    assert service.client.post("/v1/continue", json=evil).status_code == 404
    after = service.client.get(f"/v1/introspection/{uuid}/data/unprocessed").get_json()
    assert after == before
    assert service.ironic.nodes[uuid]["properties"]["cpus"] == 80


def test_reapply(service: Service, node: dict[str, Any], payload: Any) -> None:
    uuid = node["uuid"]
    bmc = node["driver_info"]["ipmi_address"]
    assert introspect(service, node, manage_boot=False)["state"] == states.FINISHED
    service.ironic.nodes[uuid]["properties"]["cpus"] = 1
    resp = service.client.post(f"/v1/introspection/{uuid}/data/unprocessed")
    assert resp.status_code == 202
    service.wait_for(uuid, states.FINISHED)
    assert service.ironic.nodes[uuid]["properties"]["cpus"] == 80

    data = payload(random_mac(), bmc)
    data["inventory"]["cpu"]["count"] = 8
    # "finished" is written before the conductor lets go of the node lock:
    # a request in that window gets 409, which means "retry later"
    resp = wait_until(
        lambda: service.client.post(
            f"/v1/introspection/{uuid}/data/unprocessed", json=data
        ),
        5,
        "the node lock to be let go (an answer other than 409)",
        until=lambda resp: resp.status_code != 409,
        interval=0.02,
    )
    assert resp.status_code == 202, resp.get_json()
    service.wait_for(uuid, states.FINISHED)
    wait_until(
        lambda: service.ironic.nodes[uuid]["properties"]["cpus"],
        5,
        "the reapplied CPU count (8) in Ironic",
        until=lambda cpus: cpus == 8,
        interval=0.02,
    )


def test_reapply_waiting_is_invalid(service: Service, node: dict[str, Any]) -> None:
    uuid = start(service, node)
    resp = service.client.post(
        f"/v1/introspection/{uuid}/data/unprocessed", json={"inventory": {}}
    )
    assert resp.status_code == 400
    assert "no defined transition" in resp.get_json()["error"]["message"]


def test_store_data_none(service: Service, conf: Any, node: dict[str, Any]) -> None:
    conf.set_override("store_data", "none", group="processing")
    uuid = node["uuid"]
    assert introspect(service, node, manage_boot=False)["state"] == states.FINISHED
    resp = service.client.get(f"/v1/introspection/{uuid}/data")
    assert resp.status_code == 404
    assert "store_data" in resp.get_json()["error"]["message"]
    resp = service.client.post(f"/v1/introspection/{uuid}/data/unprocessed")
    assert resp.status_code == 400


def test_node_in_wrong_provision_state(service: Service) -> None:
    node = service.ironic.add_node(bmc="10.9.9.9", provision_state="active")
    resp = service.client.post(f"/v1/introspection/{node['uuid']}")
    assert resp.status_code == 400
    assert "provision state 'active'" in resp.get_json()["error"]["message"]


def test_node_without_lookup_attributes(service: Service) -> None:
    node = service.ironic.add_node()
    resp = service.client.post(f"/v1/introspection/{node['uuid']}")
    assert resp.status_code == 400
    assert "neither ports nor a BMC address" in resp.get_json()["error"]["message"]


def test_unknown_node(service: Service) -> None:
    resp = service.client.post("/v1/introspection/7b7b7b7b-0000-4000-8000-000000000000")
    assert resp.status_code == 404
    assert "not found in Ironic" in resp.get_json()["error"]["message"]


def test_debug_follows_a_node(
    service: Service, caplog: pytest.LogCaptureFixture
) -> None:
    """With debug on, an operator can follow one node: the casts, the lock
    and every hook, each line naming the node (the Ironic client's line per
    call: tests/unit/baremetal)."""
    with caplog.at_level(logging.DEBUG, logger="inspector"):
        status = introspect(service)
        uuid = status["uuid"]
        expected = (
            "Cast for the starting step of node",
            f"Node {uuid} locked for processing after",
            "Hook scheduler before_update for node",
            f"The processing step of node {uuid} ended",
        )

        def missing() -> list[str]:
            lines = [r.getMessage() for r in caplog.records if uuid in r.getMessage()]
            return [e for e in expected if not any(e in line for line in lines)]

        # the step's last line follows the state the client sees by a moment
        wait_until(missing, 10, "every line naming the node", until=lambda m: not m)
    # the service's fake Ironic records the same calls the lines name
    assert ("set_boot_device", uuid) in service.ironic.calls


def test_log_lines_name_the_node_by_name_too(
    service: Service, node: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """``grep NODE-NAME`` finds the start, the Ironic update and the end:
    those lines name the node ``UUID (name)``."""
    uuid, name = node["uuid"], node["name"]
    with caplog.at_level(logging.INFO, logger="inspector"):
        assert introspect(service, node)["state"] == states.FINISHED
        expected = (
            f"Introspection of node {uuid} ({name}) recorded",
            f"Node {uuid} ({name}) updated in Ironic",
            f"Introspection of node {uuid} ({name}) finished",
        )

        def missing() -> list[str]:
            lines = [r.getMessage() for r in caplog.records]
            return [e for e in expected if not any(e in line for line in lines)]

        wait_until(missing, 10, "the lines naming the node", until=lambda m: not m)


def test_ports_read_at_start_serve_the_processing(
    service: Service, node: dict[str, Any], payload: Any
) -> None:
    """The processing of the ramdisk's post uses the ports the start listed
    (one node read, no second listing); a port an operator creates in the
    meantime with the PXE MAC is left as it is, and the introspection
    finishes."""
    uuid = start(service, node)
    mac = random_mac()
    service.ironic.create_port(uuid, {"address": mac, "pxe_enabled": False})
    service.ironic.calls.clear()
    resp = service.client.post(
        "/v1/continue", json=payload(mac, node["driver_info"]["ipmi_address"])
    )
    assert resp.status_code == 200, resp.get_json()
    assert service.wait_for(uuid, *states.FINAL)["state"] == states.FINISHED
    made = [call for call, target in service.ironic.calls if target == uuid]
    assert made.count("get_node") == 1 and "list_ports" not in made
    assert [p["address"] for p in service.ironic.node_ports(uuid)] == [mac]
    assert service.ironic.node_ports(uuid)[0]["pxe_enabled"] is False
