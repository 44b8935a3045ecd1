"""A step the API recorded is never ended by an outage that keeps it from
reaching a conductor: it waits, stored, for the leader's sweep. A request
that finds no conductor before recording anything changes nothing."""

import datetime
import logging
from typing import Any

import pytest

from inspector import exceptions, states
from inspector.conductor.rpcapi import ConductorClient
from inspector.db import introspections
from inspector.db.models import utcnow
from inspector.intake import handover
from tests.functional.conftest import (
    Service,
    add_node,
    introspect,
    random_mac,
    start,
)

OUTAGE = "the message broker is unreachable (test)"


def no_delivery(*_args: Any, **_kwargs: Any) -> str:
    raise exceptions.ServiceUnavailable(reason=OUTAGE)


def no_conductor(*_args: Any, **_kwargs: Any) -> str:
    raise exceptions.NoConductor(
        reason="no conductor is available: none is a live member of the "
        "conductor group (test)"
    )


def test_ramdisk_data_is_kept_and_processed_by_the_sweep(
    service: Service,
    node: dict[str, Any],
    payload: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="inspector.intake.handover")
    handover.OUTAGE.ok()  # whatever an earlier test left
    uuid = start(service, node)
    data = payload(random_mac(), node["driver_info"]["ipmi_address"])
    with monkeypatch.context() as patch:
        patch.setattr(ConductorClient, "process", no_delivery)
        resp = service.client.post("/v1/continue", json=data)
    # the data is stored: the ramdisk is done, it must not retry
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json() == {"uuid": uuid}
    record = introspections.get(service.rt.db, uuid)
    assert record.state == states.PROCESSING and record.owner is None
    assert record.deadline is not None
    assert record.deadline <= utcnow() + datetime.timedelta(seconds=1)
    assert any(
        OUTAGE in r.getMessage() and "stored but no conductor took it" in r.getMessage()
        for r in caplog.records
    )
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warned) == 1 and "Handing steps over to conductors failed" in warned[0]
    service.conductor._cluster_duties()  # the leader's next sweep
    status = service.wait_for(uuid, *states.FINAL)
    introspect(service)  # casts work again: one line says so
    assert any("works again" in r.getMessage() for r in caplog.records)
    assert status["state"] == states.FINISHED, status
    assert service.ironic.nodes[uuid]["properties"]["cpus"] == 80


@pytest.mark.parametrize("action", ["abort", "reapply"])
def test_operator_steps_are_kept_for_the_sweep(
    service: Service,
    payload: Any,
    monkeypatch: pytest.MonkeyPatch,
    action: str,
) -> None:
    node = add_node(service)
    uuid = start(service, node)
    if action == "reapply":
        data = payload(random_mac(), node["driver_info"]["ipmi_address"])
        assert service.client.post("/v1/continue", json=data).status_code == 200
        service.wait_for(uuid, states.FINISHED)
    with monkeypatch.context() as patch:
        patch.setattr(ConductorClient, action, no_delivery)
        path = f"/v1/introspection/{uuid}/{'abort' if action == 'abort' else 'data/unprocessed'}"
        resp = service.client.post(path)
    assert resp.status_code == 202, resp.get_json()
    step = states.ABORTING if action == "abort" else states.REAPPLYING
    assert introspections.get(service.rt.db, uuid).state == step
    service.conductor._cluster_duties()
    final = states.ERROR if action == "abort" else states.FINISHED
    status = service.wait_for(uuid, final)
    if action == "abort":
        assert status["error"] == states.ABORTED_MESSAGE, status


def test_start_without_a_conductor_records_nothing(
    service: Service, node: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    uuid = node["uuid"]
    router = service.rt.rpc.router
    with monkeypatch.context() as patch:
        patch.setattr(router, "pick", no_conductor)
        resp = service.client.post(f"/v1/introspection/{uuid}")
    assert resp.status_code == 503
    assert "no conductor is available" in resp.get_json()["error"]["message"]
    # nothing was written: the retry starts afresh
    assert service.client.get(f"/v1/introspection/{uuid}").status_code == 404
    assert ("set_boot_device", uuid) not in service.ironic.calls
    start(service, node)
    service.client.post(f"/v1/introspection/{uuid}/abort")
    service.wait_for(uuid, states.ERROR)


def test_abort_without_a_conductor_changes_nothing(
    service: Service, node: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    uuid = start(service, node)
    router = service.rt.rpc.router
    with monkeypatch.context() as patch:
        patch.setattr(router, "pick", no_conductor)
        resp = service.client.post(f"/v1/introspection/{uuid}/abort")
    assert resp.status_code == 503
    assert introspections.get(service.rt.db, uuid).state == states.WAITING
    assert service.client.post(f"/v1/introspection/{uuid}/abort").status_code == 202
    service.wait_for(uuid, states.ERROR)
