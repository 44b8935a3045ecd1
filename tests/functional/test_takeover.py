"""Lost work is found and resumed; a stale worker never touches Ironic."""

from typing import Any

import pytest

from inspector import states
from inspector.db import claims, introspections, transitions
from inspector.locking.semaphore import SemaphoreLockProvider
from tests.functional.conftest import Service, random_mac, start


def _processing_left_by(
    service: Service, uuid: str, payload: Any, node: Any, owner: str, run: str
) -> None:
    """A record as a conductor leaves it when it dies while processing."""
    db = service.rt.db
    record = introspections.start(db, uuid, True, {"bmc_address": ["192.0.2.1"]})
    record = transitions.waiting(db, record)
    data = payload(random_mac(), node["driver_info"]["ipmi_address"])
    record = transitions.posted(db, record, data)
    claims.claim(db, uuid, record.version, owner, run)


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


def _processing_cast_to(service: Service, uuid: str, payload: Any, host: str) -> None:
    """A continue the API cast to ``host`` (RabbitMQ) that nobody claimed
    yet, with the claim deadline far ahead."""
    db = service.rt.db
    record = introspections.start(db, uuid, True, {"bmc_address": ["192.0.2.9"]})
    record = transitions.waiting(db, record)
    data = payload(random_mac(), "192.0.2.9")
    record = transitions.posted(db, record, data, claim_within=3600)
    assert claims.handed(db, uuid, record.version, host)


def test_cast_to_a_conductor_that_left_is_resumed_before_its_deadline(
    service: Service, node: dict[str, Any], payload: Any
) -> None:
    """Issue 35, window B: the cast sits in a dead conductor's queue; the
    leader does not wait the claim deadline (an hour here) for it."""
    uuid = node["uuid"]
    _processing_cast_to(service, uuid, payload, "conductor-killed")
    service.conductor._cluster_duties()
    status = service.wait_for(uuid, *states.FINAL, timeout=10)
    assert status["state"] == states.FINISHED, status


def test_cast_to_a_live_conductor_waits_for_it(
    service: Service, node: dict[str, Any], payload: Any
) -> None:
    uuid = node["uuid"]
    _processing_cast_to(service, uuid, payload, service.rt.conf.host)
    from inspector.conductor.takeover import Takeover

    manager = service.conductor.manager
    sweeper = Takeover(service.rt, manager.queue, manager.steps)
    resumed: list[str] = []
    sweeper.resume = lambda record, *_: resumed.append(record.uuid)  # type: ignore[method-assign]
    sweeper.sweep(lambda: [service.rt.conf.host], True)
    sweeper.stop()  # waits for what the sweep handed to its resumer
    assert uuid not in resumed
    current = introspections.get(service.rt.db, uuid)
    assert current.state == states.PROCESSING and current.owner is None
    transitions.failed(
        service.rt.db, introspections.get(service.rt.db, uuid), "cleanup"
    )


def test_unclaimed_step_before_its_deadline_is_left_alone(
    service: Service, node: dict[str, Any]
) -> None:
    uuid = node["uuid"]
    db = service.rt.db
    introspections.start(db, uuid, True, {"bmc_address": ["192.0.2.3"]})
    service.conductor._cluster_duties()
    assert introspections.get(db, uuid).state == states.STARTING
    assert ("set_boot_device", uuid) not in service.ironic.calls
    transitions.failed(db, introspections.get(db, uuid), "test cleanup")


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
        claims.claim(db, uuid, current.version, "other-conductor", "r")
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
    transitions.failed(db, introspections.get(db, uuid), "test cleanup")


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
    claims.claim(db, uuid, record.version, service.rt.conf.host, service.rt.run_id)
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
    from inspector.conductor import work_queue

    monkeypatch.setattr(work_queue, "LOCK_TIMEOUT", 0.3)
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


def test_next_step_delivered_while_the_last_one_ends_is_claimed(
    service: Service,
    node: dict[str, Any],
    payload: Any,
    conf: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 35, window A: the ramdisk posts as soon as the node is
    ``waiting``, and the cast of the processing step reaches the conductor
    whose start step is still giving the node's lock back. That delivery
    used to be turned away ("already being worked on here"), leaving the
    step unclaimed until the claim deadline (an hour here)."""
    import threading

    conf.set_override("claim_timeout", 3600, group="coordination")
    uuid = node["uuid"]
    manager = service.conductor.manager
    ending = threading.Event()
    let_go = threading.Event()
    delivered = threading.Event()
    real_get_lock = service.rt.locks.get_lock

    def get_lock(node_uuid: str) -> Any:
        lock = real_get_lock(node_uuid)
        if node_uuid != uuid or ending.is_set():  # the API's, or processing's
            return lock
        if not threading.current_thread().name.startswith("work"):
            return lock
        real_release = lock.release

        def release() -> None:  # the start step ended; its worker lingers here
            ending.set()
            let_go.wait(10)
            real_release()

        lock.release = release  # type: ignore[method-assign]
        return lock

    real_submit = manager.queue.submit

    def submit(*args: Any, **kwargs: Any) -> Any:
        queued = real_submit(*args, **kwargs)
        if args[2] == states.PROCESSING:
            delivered.set()
        return queued

    monkeypatch.setattr(service.rt.locks, "get_lock", get_lock)
    monkeypatch.setattr(manager.queue, "submit", submit)
    try:
        assert service.client.post(f"/v1/introspection/{uuid}").status_code == 202
        assert ending.wait(10), "the start step never ended"
        data = payload(random_mac(), node["driver_info"]["ipmi_address"])
        assert service.client.post("/v1/continue", json=data).status_code == 200
        assert delivered.wait(10), "the processing cast never arrived"
        assert introspections.get(service.rt.db, uuid).owner == service.rt.conf.host
    finally:
        let_go.set()
    status = service.wait_for(uuid, *states.FINAL, timeout=10)
    assert status["state"] == states.FINISHED, status


def test_step_of_a_dead_conductor_is_visible_while_it_waits(
    service: Service,
    node: dict[str, Any],
    payload: Any,
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 35: while the takeover has not happened yet, the status names
    the dead owner and since when, ``conductor lost-steps`` lists the step
    (exit status 1), and once resumed the counter of steps taken over says
    so."""
    import json

    from inspector import metrics
    from tests.functional.conftest import database_conf, run_script

    uuid = node["uuid"]
    manager = service.conductor.manager
    real_sweep = manager.sweep
    monkeypatch.setattr(manager, "sweep", lambda *_a, **_k: 0)  # no takeover yet
    _processing_left_by(service, uuid, payload, node, "conductor-killed", "r")
    status = service.client.get(f"/v1/introspection/{uuid}").get_json()
    assert status["state"] == states.PROCESSING
    assert status["owner"] == "conductor-killed"
    claimed = introspections.get(service.rt.db, uuid).claimed_at
    assert claimed is not None and status["owner_since"] == claimed.isoformat()
    old = service.client.get(
        f"/v1/introspection/{uuid}",
        headers={"X-OpenStack-Ironic-Inspector-API-Version": "1.21"},
    ).get_json()
    assert "owner" not in old and "owner_since" not in old

    conf = f"[DEFAULT]\nhost = {service.rt.conf.host}\n" + database_conf(service)
    listed = run_script(
        tmp_path, "ironic-inspector-manage", conf, "conductor", "lost-steps", "--json"
    )
    assert listed.returncode == 1, listed.stderr
    (row,) = [r for r in json.loads(listed.stdout) if r["node"] == uuid]
    assert row == {
        "node": uuid,
        "step": "processing",
        "owner": "conductor-killed",
        "owner_since": claimed.isoformat(),
        "handed_to": None,
        "reason": "conductor conductor-killed left the group while processing",
    }

    # the session's database also holds other tests' records (a status
    # test's unclaimed start turns lost 30 s later): judge this node's
    # resumes, not how many the sweep found
    takeover = manager.takeover
    real_resume = takeover.resume
    resumed: list[tuple[str, str, str]] = []

    def spy(record: Any, reason: str, cause: str = "owner_left") -> None:
        resumed.append((record.uuid, record.state, cause))
        real_resume(record, reason, cause)

    monkeypatch.setattr(takeover, "resume", spy)
    taken = metrics.STEPS_TAKEN_OVER.labels("processing", "owner_left")
    before = taken._value.get()
    assert real_sweep(service.conductor.members.hosts, True) >= 1
    status = service.wait_for(uuid, *states.FINAL, timeout=10)
    assert status["state"] == states.FINISHED and status["owner"] is None
    # found once, taken over as its owner's leaving, and counted once
    assert [r for r in resumed if r[0] == uuid] == [
        (uuid, states.PROCESSING, "owner_left")
    ]
    assert [r for r in resumed if r[1:] == (states.PROCESSING, "owner_left")] == [
        (uuid, states.PROCESSING, "owner_left")
    ]
    assert taken._value.get() == before + 1
    listed = run_script(
        tmp_path, "ironic-inspector-manage", conf, "conductor", "lost-steps", "--json"
    )
    assert uuid not in listed.stdout


class _Locks(SemaphoreLockProvider):
    """Node locks as ``held`` says (key -> value), minus those broken;
    counts the reads of the holders and records the breaks."""

    def __init__(self, held: dict[str, str]) -> None:
        super().__init__()
        self.values = held
        self.broken: list[str] = []
        self.reads = 0

    def holders(self) -> dict[str, str]:
        self.reads += 1
        return {k: v for k, v in self.values.items() if k not in self.broken}

    def break_lock(self, key: str, value: str) -> bool:
        assert self.values[key] == value
        self.broken.append(key)
        return True


def test_locks_of_a_conductor_that_left_are_broken_on_the_second_look(
    service: Service,
) -> None:
    """Issue 35, window C: a killed conductor's node locks stayed taken for
    the rest of their lease (lock_timeout, 30 s by default), holding up the
    resumed step or the node's next one. The leader breaks them once it
    has seen their holder out of the group in two sweeps in a row."""
    import dataclasses

    from inspector.conductor.takeover import Takeover

    host = service.rt.conf.host
    held = {
        "k-dead": "conductor-killed/run1/aa",
        "k-api": "0123abcd",  # the API's locks name no conductor
        "k-live": f"{host}/{service.rt.run_id}/bb",
    }
    locks = _Locks(held)
    broken = locks.broken
    # a takeover of its own: the service's periodic sweep runs beside it
    rt = dataclasses.replace(service.rt, locks=locks)
    manager = service.conductor.manager
    sweeper = Takeover(rt, manager.queue, manager.steps)
    try:
        sweeper.sweep(lambda: [host], True)
        assert broken == []  # first look: maybe a conductor about to join
        sweeper.sweep(lambda: ["someone-else"], True)  # a view without us
        sweeper.sweep(lambda: [host], True)
        assert broken == []
        sweeper.sweep(lambda: [host], True)
        assert broken == ["k-dead"]
        sweeper.sweep(lambda: [host], False)  # only the leader breaks locks
        assert broken == ["k-dead"]
    finally:
        sweeper.stop()


def test_locks_of_an_earlier_run_of_this_host_are_broken_at_the_first_look(
    service: Service, node: dict[str, Any], payload: Any
) -> None:
    """A conductor killed and started again under its name at once: its
    earlier run's node locks are broken by its first sweep, leader or not,
    whether its earlier run's steps are its own to resume or the leader
    resumed them elsewhere while it started (they would wait out the
    locks' lease otherwise); later sweeps read the locks again only when a
    step of an earlier run turns up."""
    import dataclasses

    from inspector.conductor.takeover import Takeover

    host, uuid = service.rt.conf.host, node["uuid"]
    held = {
        "k-elsewhere": f"{host}/an-earlier-run/aa",  # its step resumed elsewhere
        "k-now": f"{host}/{service.rt.run_id}/bb",  # this run's own
        "k-other": "conductor-2/run9/cc",  # another live conductor's
    }
    locks = _Locks(held)
    broken = locks.broken
    resumed: list[str] = []
    rt = dataclasses.replace(service.rt, locks=locks)
    manager = service.conductor.manager
    sweeper = Takeover(rt, manager.queue, manager.steps)
    # a broken lock comes before the resume of the step it held
    sweeper.resume = lambda record, *_: resumed.append(  # type: ignore[method-assign]
        f"{record.uuid} after {sorted(broken)}"
    )
    try:
        sweeper.sweep(lambda: [host, "conductor-2"], False)  # not the leader
        assert broken == ["k-elsewhere"] and locks.reads == 1
        sweeper.sweep(lambda: [host, "conductor-2"], False)
        assert locks.reads == 1  # nothing calls for another look
        held[uuid] = f"{host}/an-earlier-run/dd"
        _processing_left_by(service, uuid, payload, node, host, "an-earlier-run")
        sweeper.sweep(lambda: [host, "conductor-2"], False)
        assert broken == ["k-elsewhere", uuid] and locks.reads == 2
        sweeper.stop()
        assert resumed == [f"{uuid} after {sorted(['k-elsewhere', uuid])}"]
    finally:
        sweeper.stop()
        transitions.failed(
            service.rt.db, introspections.get(service.rt.db, uuid), "cleanup"
        )


class Idle:
    """An RPC server that delivers nothing: the test hands the step over."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def wait(self) -> None: ...


@pytest.mark.parametrize(
    "standalone,who",
    [
        (True, "this process resumes them when it starts again"),
        (False, "the leader resumes them once this conductor has left the group"),
    ],
)
def test_a_stop_gives_steps_their_time_then_names_what_is_left(
    base_conf: Any,
    tmp_path: Any,
    caplog: pytest.LogCaptureFixture,
    standalone: bool,
    who: str,
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
    from inspector.db import data_store, engine, migration
    from inspector.runtime import Runtime
    from tests.functional.fake_ironic import FakeIronic

    base_conf.set_override("standalone", standalone)
    db = engine.Database(f"sqlite:///{tmp_path}/stop.sqlite")
    migration.upgrade(db)
    ironic: Any = FakeIronic()  # the Ironic client's interface
    rt = Runtime(
        conf=base_conf,
        db=db,
        baremetal=ironic,
        locks=SemaphoreLockProvider(),
        stores=data_store.DataStores(base_conf, db),
    )
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
        f"node {uuid} (starting); {who}"
    )
    assert introspections.get(db, uuid).owner == base_conf.host  # still its own
    db.dispose()
