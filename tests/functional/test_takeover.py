"""Lost work is found and resumed; a stale worker never touches Ironic."""

from typing import Any

import pytest

from inspector import states
from inspector.db import introspections
from tests.functional.conftest import Service, random_mac, start


def _processing_left_by(
    service: Service, uuid: str, payload: Any, node: Any, owner: str, run: str
) -> None:
    """A record as a conductor leaves it when it dies while processing."""
    db = service.rt.db
    record = introspections.start(db, uuid, True, {"bmc_address": ["192.0.2.1"]})
    record = introspections.transition(
        db, uuid, states.WAIT, expected_version=record.version
    )
    data = payload(random_mac(), node["driver_info"]["ipmi_address"])
    record = introspections.transition(
        db, uuid, states.PROCESS, expected_version=record.version, raw_data=data
    )
    introspections.claim(db, uuid, record.version, owner, run)


def test_own_work_from_before_a_restart_is_resumed(
    service: Service, node: dict[str, Any], payload: Any
) -> None:
    uuid = node["uuid"]
    _processing_left_by(
        service, uuid, payload, node, service.rt.conf.host, "an-earlier-run"
    )
    service.conductor._cluster_duties()
    status = service.wait_for(uuid, *states.FINAL)
    assert status["state"] == states.FINISHED, status
    assert service.ironic.nodes[uuid]["properties"]["cpus"] == 80
    assert service.ironic.nodes[uuid]["power_state"] == "power off"
    assert introspections.get(service.rt.db, uuid).owner is None


def test_work_of_a_vanished_conductor_is_resumed_by_the_leader(
    service: Service, node: dict[str, Any], payload: Any
) -> None:
    uuid = node["uuid"]
    _processing_left_by(service, uuid, payload, node, "conductor-gone", "r")
    service.conductor._cluster_duties()  # this process is the only member
    status = service.wait_for(uuid, *states.FINAL)
    assert status["state"] == states.FINISHED, status


def test_unclaimed_step_past_its_deadline_is_resumed(
    service: Service, node: dict[str, Any]
) -> None:
    uuid = node["uuid"]
    db = service.rt.db
    introspections.start(
        db, uuid, True, {"bmc_address": ["192.0.2.2"]}, claim_within=-1
    )  # its cast was lost
    service.conductor._cluster_duties()
    service.wait_for(uuid, states.WAITING)
    assert ("set_boot_device", uuid) in service.ironic.calls
    assert service.ironic.nodes[uuid]["power_state"] == "power on"


def test_unclaimed_step_before_its_deadline_is_left_alone(
    service: Service, node: dict[str, Any]
) -> None:
    uuid = node["uuid"]
    db = service.rt.db
    introspections.start(db, uuid, True, {"bmc_address": ["192.0.2.3"]})
    service.conductor._cluster_duties()
    assert introspections.get(db, uuid).state == states.STARTING
    assert ("set_boot_device", uuid) not in service.ironic.calls
    introspections.transition(db, uuid, states.FAIL, error="test cleanup")


def test_stale_worker_stops_before_touching_ironic(
    service: Service, node: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another conductor takes the step over while this one is paused
    (here: waiting for its power-on slot): it must not power the node on."""
    uuid = node["uuid"]
    db = service.rt.db
    record = introspections.start(db, uuid, True, {"bmc_address": ["192.0.2.4"]})
    manager = service.conductor.manager

    def paused() -> float:
        current = introspections.get(db, uuid)
        introspections.claim(db, uuid, current.version, "other-conductor", "r")
        return 0.0

    monkeypatch.setattr(manager.pacer, "wait", paused)
    queued = manager.queue.submit(
        uuid, record.version, states.STARTING, manager.steps[states.STARTING]
    )
    assert queued is not None
    queued.result()
    assert ("set_boot_device", uuid) not in service.ironic.calls
    assert service.ironic.nodes[uuid]["power_state"] != "power on"
    current = introspections.get(db, uuid)
    assert current.state == states.STARTING and current.owner == "other-conductor"
    introspections.transition(db, uuid, states.FAIL, error="test cleanup")


def test_duplicate_delivery_does_nothing(
    service: Service, node: dict[str, Any]
) -> None:
    uuid = start(service, node)
    boots = service.ironic.calls.count(("set_boot_device", uuid))
    # the cast that started it carried version 1; it arrives a second time
    service.conductor.manager.start_introspection({}, uuid, 1)
    assert service.ironic.calls.count(("set_boot_device", uuid)) == boots
    assert introspections.get(service.rt.db, uuid).state == states.WAITING
    service.client.post(f"/v1/introspection/{uuid}/abort")
    service.wait_for(uuid, states.ERROR)


def test_own_step_without_a_worker_is_resumed(
    service: Service, node: dict[str, Any]
) -> None:
    """Claimed by this very process, but its worker is gone (an error path
    ended it early): the next sweep runs the step again."""
    uuid = node["uuid"]
    db = service.rt.db
    record = introspections.start(db, uuid, True, {"bmc_address": ["192.0.2.5"]})
    introspections.claim(
        db, uuid, record.version, service.rt.conf.host, service.rt.run_id
    )
    service.conductor._cluster_duties()
    service.wait_for(uuid, states.WAITING)
    assert ("set_boot_device", uuid) in service.ironic.calls


def test_lost_enrolling_step_cannot_be_resumed(
    service: Service, node: dict[str, Any]
) -> None:
    """An enrolling step's data was never stored: the leader ends it,
    saying to start again."""
    uuid = node["uuid"]
    introspections.enroll(service.rt.db, uuid, claim_within=-1)
    service.conductor._cluster_duties()
    status = service.wait_for(uuid, states.ERROR)
    assert status["error"].startswith("Introspection lost: no conductor picked up")
    assert status["error"].endswith("; it cannot be resumed, start it again")


def test_boot_device_failure_ends_the_start(
    service: Service, node: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspector import exceptions

    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise exceptions.BaremetalError("Ironic answered 400: no PXE on this node")

    monkeypatch.setattr(service.ironic, "set_boot_device", refuse)
    uuid = node["uuid"]
    assert service.client.post(f"/v1/introspection/{uuid}").status_code == 202
    status = service.wait_for(uuid, states.ERROR)
    assert status["error"].startswith("Failed to set boot device to PXE: ")


def test_lock_held_by_other_work_ends_the_step(
    service: Service, node: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspector.conductor import work

    monkeypatch.setattr(work, "LOCK_TIMEOUT", 0.3)
    uuid = node["uuid"]
    record = introspections.start(service.rt.db, uuid, True, {"bmc_address": ["x"]})
    lock = service.rt.locks.get_lock(uuid)
    assert lock.acquire()
    try:
        manager = service.conductor.manager
        queued = manager.queue.submit(
            uuid, record.version, states.STARTING, manager.steps[states.STARTING]
        )
        assert queued is not None
        queued.result()
    finally:
        lock.release()
    status = service.wait_for(uuid, states.ERROR)
    assert status["error"] == (
        f"Could not lock node {uuid} within 0 s: other work on it did not finish"
    )


class Idle:
    """An RPC server that delivers nothing: the test hands the step over."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def wait(self) -> None: ...


def test_a_stop_gives_steps_their_time_then_names_what_is_left(
    base_conf: Any, tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """[DEFAULT]graceful_shutdown_timeout: a stop waits for the steps this
    conductor owns, and when the time is up names those left (resumed by
    the leader, or by this host when it starts again) instead of waiting
    for them. Its own database and no transport: the session's service
    goes on untouched."""
    import logging
    import threading

    from inspector.conductor.service import ConductorService
    from inspector.coordination.members import FixedConductor
    from inspector.db import engine, migration
    from inspector.locking.semaphore import SemaphoreLockProvider
    from inspector.runtime import Runtime
    from tests.functional.fake_ironic import FakeIronic

    db = engine.Database(f"sqlite:///{tmp_path}/stop.sqlite")
    migration.upgrade(db)
    ironic: Any = FakeIronic()  # the Ironic client's interface
    rt = Runtime(conf=base_conf, db=db, baremetal=ironic, locks=SemaphoreLockProvider())
    conductor = ConductorService(rt, lambda _m: Idle(), FixedConductor("stop-1"))
    conductor.start()
    entered, release = threading.Event(), threading.Event()

    def stuck(_record: Any) -> None:
        entered.set()
        assert release.wait(10)

    conductor.manager.steps[states.STARTING] = stuck
    uuid = "6f1d3c57-2d0e-4c4e-9a3e-5b0c1f2a7d11"
    record = introspections.start(db, uuid, True)
    conductor.manager.start_introspection({}, uuid, record.version)
    assert entered.wait(10)
    caplog.set_level(logging.INFO, logger="inspector.conductor.service")
    try:
        left = conductor.stop(timeout=1)
    finally:
        release.set()
    assert left == {uuid: states.STARTING}
    (line,) = [r.getMessage() for r in caplog.records if "unfinished" in r.getMessage()]
    assert line.endswith(
        "step(s) unfinished after 1 s ([DEFAULT]graceful_shutdown_timeout): "
        f"node {uuid} (starting); the leader resumes them once this conductor "
        "has left the group"
    )
    assert introspections.get(db, uuid).owner == base_conf.host  # still its own
    db.dispose()
