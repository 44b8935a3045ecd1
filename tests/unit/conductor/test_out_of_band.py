"""The out-of-band start step, with the BMC's answer and the processing
step replaced (the collection has its own tests in tests/unit/redfish)."""

import datetime
import json
from typing import Any

import pytest

from inspector import exceptions, states
from inspector.conductor import ironic_inspection, out_of_band, processing, start
from inspector.conductor.in_band import InBand
from inspector.conductor.inspect import Inspectors
from inspector.db import claims, followed, introspections, stored_data, transitions
from inspector.db.introspections import IntrospectionRecord
from inspector.redfish import collect
from inspector.redfish.sessions import Sessions
from inspector.runtime import Runtime
from tests.unit.conductor.conftest import UUID, FakeIronic, claimed, moved_on
from tests.unit.conductor.test_start import Pacer

MAC1, MAC2 = "52:54:00:00:00:01", "52:54:00:00:00:02"
INVENTORY = {
    "cpu": {"count": 8, "architecture": "x86_64"},
    "memory": {"physical_mb": 16384},
    "disks": [{"name": "d0", "size": 100 * 1024**3}],
    "interfaces": [
        {"name": "nic0", "mac_address": MAC1},
        {"name": "nic1", "mac_address": MAC2},
    ],
}


def _starting(rt: Runtime, mode: str) -> IntrospectionRecord:
    record = introspections.start(rt.db, UUID, True, mode=mode)
    return claims.claim(
        rt.db, UUID, record.version, rt.conf.host, rt.run_id, states.STARTING
    )


@pytest.fixture
def answer(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What the BMC answers (an inventory, or an error to raise)."""
    told: dict[str, Any] = {"inventory": dict(INVENTORY)}

    def fake(_sessions: Sessions, _creds: Any) -> collect.Collected:
        if "error" in told:
            raise told["error"]
        return collect.Collected(inventory=told["inventory"])

    monkeypatch.setattr(collect, "collect", fake)
    return told


@pytest.fixture
def processed(monkeypatch: pytest.MonkeyPatch) -> list[IntrospectionRecord]:
    seen: list[IntrospectionRecord] = []
    monkeypatch.setattr(processing, "run", lambda _rt, _hooks, rec: seen.append(rec))
    return seen


@pytest.fixture
def redfish_node(ironic: FakeIronic) -> None:
    ironic.nodes[UUID] = {
        "uuid": UUID,
        "driver_info": {
            "redfish_address": "https://bmc.example",
            "redfish_username": "u",
            "redfish_password": "p",
        },
    }
    ironic.ports[UUID] = [{"uuid": "p1", "address": MAC1}]


def _run(rt: Runtime, record: IntrospectionRecord) -> Pacer:
    """The start step as the conductor runs it, and the processing step it
    makes claimed as the work queue claims it."""
    pacer = Pacer()
    in_band = InBand(rt, pacer)  # type: ignore[arg-type]
    inspectors = Inspectors(in_band, out_of_band.Bmc(rt, Sessions(rt.conf), in_band))
    following = start.run(rt, inspectors.for_run, record)
    if following is not None:
        processing.run(rt, [], claimed(rt, following))
    return pacer


def test_in_band_is_the_ramdisk_start(rt: Runtime, ironic: FakeIronic) -> None:
    pacer = _run(rt, _starting(rt, states.IN_BAND))
    assert pacer.waits == 1
    assert "set_power_state" in ironic.methods()


@pytest.mark.usefixtures("redfish_node", "answer")
def test_out_of_band_ports_first_then_processing(
    rt: Runtime, ironic: FakeIronic, processed: list[IntrospectionRecord]
) -> None:
    pacer = _run(rt, _starting(rt, states.OUT_OF_BAND))
    assert pacer.waits == 0
    assert ironic.methods() == ["get_node", "list_ports", "create_port"]
    _method, _node, body = ironic.calls[-1]
    assert body["address"] == MAC2 and body["pxe_enabled"] is False
    [record] = processed
    assert (record.state, record.mode, record.owner) == (
        states.PROCESSING,
        states.OUT_OF_BAND,
        rt.conf.host,
    )
    data = stored_data.get(rt.db, UUID, processed=False)
    assert data["inventory"] == INVENTORY
    assert set(data["provenance"].values()) == {"redfish"}


@pytest.mark.usefixtures("redfish_node")
def test_auto_falls_back_keeping_the_bmc_data(
    rt: Runtime,
    ironic: FakeIronic,
    answer: dict[str, Any],
    processed: list[IntrospectionRecord],
) -> None:
    answer["inventory"] = {**INVENTORY, "disks": []}
    pacer = _run(rt, _starting(rt, states.AUTO))
    assert pacer.waits == 1 and not processed
    assert "create_port" not in ironic.methods()
    assert ironic.methods()[-1] == "set_power_state"
    record = introspections.get(rt.db, UUID)
    assert (record.state, record.mode) == (states.WAITING, None)
    kept = json.loads(record.bmc_data or "{}")
    assert kept["redfish"]["lacking"] == ["local_gb (no drives)"]


@pytest.mark.usefixtures("redfish_node")
def test_bmc_error_writes_nothing(
    rt: Runtime, ironic: FakeIronic, answer: dict[str, Any]
) -> None:
    answer["error"] = exceptions.BmcError(bmc="BMC x", reason="refused")
    with pytest.raises(exceptions.BmcError):
        _run(rt, _starting(rt, states.OUT_OF_BAND))
    assert ironic.methods() == ["get_node"]
    assert introspections.get(rt.db, UUID).state == states.STARTING


@pytest.mark.usefixtures("redfish_node", "answer")
def test_stale_step_writes_nothing(rt: Runtime, ironic: FakeIronic) -> None:
    record = _starting(rt, states.OUT_OF_BAND)
    moved_on(rt, record)
    with pytest.raises(exceptions.StaleState):
        _run(rt, record)
    assert "create_port" not in ironic.methods()


def test_fallback_data_reaches_the_final_state_dropped(
    rt: Runtime, ironic: FakeIronic
) -> None:
    record = introspections.start(rt.db, UUID, True, mode=states.AUTO)
    waiting = transitions.waiting(rt.db, record, {"inventory": {}})
    assert waiting.bmc == {"inventory": {}} and waiting.mode is None
    failed = transitions.timed_out(rt.db, waiting)
    assert failed.bmc_data is None


# mode auto: a BMC that cannot be asked is a reason to boot the ramdisk


@pytest.mark.usefixtures("redfish_node")
def test_auto_boots_the_ramdisk_when_the_bmc_cannot_be_asked(
    rt: Runtime, ironic: FakeIronic, answer: dict[str, Any]
) -> None:
    answer["error"] = exceptions.BmcError(
        bmc="BMC https://bmc.example", reason="could not be reached: refused"
    )
    pacer = _run(rt, _starting(rt, states.AUTO))
    assert pacer.waits == 1
    assert "create_port" not in ironic.methods()
    assert ironic.methods()[-1] == "set_power_state"
    record = introspections.get(rt.db, UUID)
    assert record.state == states.WAITING
    kept = json.loads(record.bmc_data or "{}")
    assert kept["inventory"] == {}
    assert "could not be reached" in kept["redfish"]["error"]
    assert kept["redfish"]["lacking"] == [
        f"{fact} (the BMC could not be asked)"
        for fact in ("cpus", "memory_mb", "local_gb", "macs")
    ]


@pytest.mark.usefixtures("redfish_node")
def test_auto_asks_within_the_budget(
    rt: Runtime,
    monkeypatch: pytest.MonkeyPatch,
    processed: list[IntrospectionRecord],
) -> None:
    rt.conf.set_override("auto_budget", 3.5, "redfish")
    budgets: list[float] = []

    def within(_s: Sessions, _c: Any, budget: float) -> collect.Collected:
        budgets.append(budget)
        return collect.Collected(inventory=dict(INVENTORY))

    monkeypatch.setattr(collect, "collect_within", within)
    _run(rt, _starting(rt, states.AUTO))
    assert budgets == [3.5] and len(processed) == 1


# [redfish]engine = ironic


class IronicInspects:
    """Ironic's inspection of the node, seen through polls: the node stays
    ``inspecting`` for ``polls`` sleeps, then ends in ``ends_in``; the
    clock moves by each sleep."""

    def __init__(
        self, ironic: FakeIronic, polls: int = 2, ends_in: str = "manageable"
    ) -> None:
        self.ironic, self.polls, self.ends_in = ironic, polls, ends_in
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        node = self.ironic.nodes[UUID]
        if "set_provision_state" in self.ironic.methods():
            node["provision_state"] = "inspecting"
            if len(self.slept) > self.polls:
                node["provision_state"] = self.ends_in


@pytest.fixture
def ironic_node(
    rt: Runtime, ironic: FakeIronic, monkeypatch: pytest.MonkeyPatch
) -> IronicInspects:
    rt.conf.set_override("engine", "ironic", "redfish")
    ironic.nodes[UUID] = {
        "uuid": UUID,
        "inspect_interface": "redfish",
        "provision_state": "manageable",
        "driver_info": {"redfish_address": "https://bmc.example"},
    }
    ironic.ports[UUID] = [{"uuid": "p1", "address": MAC1}]
    ironic.inventories[UUID] = {"inventory": dict(INVENTORY), "plugin_data": {}}
    inspects = IronicInspects(ironic)
    monkeypatch.setattr(ironic_inspection, "clock", inspects.clock)
    monkeypatch.setattr(ironic_inspection, "sleep", inspects.sleep)
    return inspects


def test_ironic_engine_inspects_waits_and_reads_the_inventory(
    rt: Runtime,
    ironic: FakeIronic,
    ironic_node: IronicInspects,
    processed: list[IntrospectionRecord],
) -> None:
    pacer = _run(rt, _starting(rt, states.OUT_OF_BAND))
    assert pacer.waits == 0
    methods = ironic.methods()
    assert methods[:2] == ["get_node", "set_provision_state"]
    assert ironic.calls[1][2] == "inspect"
    assert methods.count("get_node") == 1 + 3  # the start, three polls
    assert methods[-3:] == ["get_inventory", "list_ports", "create_port"]
    # the port Ironic has is not made again
    assert [c[2]["address"] for c in ironic.calls if c[0] == "create_port"] == [MAC2]
    assert ironic_node.slept == [0.5, 0.75, 1.125]
    [record] = processed
    assert record.mode == states.OUT_OF_BAND
    data = stored_data.get(rt.db, UUID, processed=False)
    assert data["inventory"]["memory"] == INVENTORY["memory"]
    assert set(data["provenance"].values()) == {"redfish"}
    assert data["redfish"]["engine"] == "ironic"


def test_ironic_engine_marks_ironics_inspection_as_ours(
    rt: Runtime,
    ironic: FakeIronic,
    ironic_node: IronicInspects,
    processed: list[IntrospectionRecord],
) -> None:
    """Following Ironic's inspections: the one ours asked for is marked
    seen, so the follower never records it again as Ironic's own."""
    rt.conf.set_override("enabled", True, "ironic_follow")
    ironic.nodes[UUID]["inspection_started_at"] = "2026-12-01T10:00:00+00:00"
    ironic.nodes[UUID]["inspection_finished_at"] = "2026-12-01T10:00:09+00:00"
    _run(rt, _starting(rt, states.OUT_OF_BAND))
    [seen] = followed.seen(rt.db, [UUID]).values()
    assert seen.finished_at == datetime.datetime(2026, 12, 1, 10, 0, 9)
    assert not followed.skip(rt.db, seen)  # the follower finds it recorded


def test_ironic_engine_failure_is_our_error(
    rt: Runtime, ironic: FakeIronic, ironic_node: IronicInspects
) -> None:
    ironic_node.ends_in = "inspect failed"
    ironic.nodes[UUID]["last_error"] = "Failed to discover memory_mb"
    with pytest.raises(exceptions.BmcError) as caught:
        _run(rt, _starting(rt, states.OUT_OF_BAND))
    assert "Ironic's inspection failed: Failed to discover memory_mb" in str(
        caught.value
    )
    assert "https://bmc.example" in str(caught.value)
    assert "get_inventory" not in ironic.methods()


def test_ironic_engine_failure_in_auto_boots_the_ramdisk(
    rt: Runtime, ironic: FakeIronic, ironic_node: IronicInspects
) -> None:
    ironic_node.ends_in = "inspect failed"
    ironic.nodes[UUID]["last_error"] = "boom"
    pacer = _run(rt, _starting(rt, states.AUTO))
    assert pacer.waits == 1 and ironic.methods()[-1] == "set_power_state"
    kept = json.loads(introspections.get(rt.db, UUID).bmc_data or "{}")
    assert "boom" in kept["redfish"]["error"]


def test_ironic_engine_wait_is_bounded(
    rt: Runtime, ironic: FakeIronic, ironic_node: IronicInspects
) -> None:
    rt.conf.set_override("ironic_timeout", 20, "redfish")
    ironic_node.polls = 10**6
    with pytest.raises(exceptions.InspectorError) as caught:
        _run(rt, _starting(rt, states.AUTO))  # no ramdisk: Ironic holds it
    assert not isinstance(caught.value, exceptions.BmcError)
    assert "[redfish]ironic_timeout (20 s)" in str(caught.value)
    assert 20 <= ironic_node.now < 26
    assert max(ironic_node.slept) == ironic_inspection.LAST_POLL
    assert "set_power_state" not in ironic.methods()


def test_ironic_engine_resumed_step_waits_without_asking_again(
    rt: Runtime,
    ironic: FakeIronic,
    ironic_node: IronicInspects,
    processed: list[IntrospectionRecord],
) -> None:
    ironic.nodes[UUID]["provision_state"] = "inspecting"
    ironic.calls.append(("set_provision_state", UUID, "inspect"))  # earlier
    _run(rt, _starting(rt, states.OUT_OF_BAND))
    assert ironic.methods().count("set_provision_state") == 1
    assert len(processed) == 1


def test_ironic_engine_refuses_a_node_it_cannot_inspect(
    rt: Runtime, ironic: FakeIronic, ironic_node: IronicInspects
) -> None:
    ironic.nodes[UUID]["inspect_interface"] = "inspector"
    with pytest.raises(exceptions.InvalidInput) as caught:
        _run(rt, _starting(rt, states.OUT_OF_BAND))
    assert "inspect_interface 'inspector'" in str(caught.value)
    assert ironic.methods() == ["get_node"]


def test_ironic_engine_stops_waiting_when_the_introspection_moved_on(
    rt: Runtime,
    ironic: FakeIronic,
    ironic_node: IronicInspects,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    record = _starting(rt, states.OUT_OF_BAND)
    sleep = ironic_node.sleep

    def aborted(seconds: float) -> None:
        sleep(seconds)
        if len(ironic_node.slept) == 2:
            moved_on(rt, record)

    monkeypatch.setattr(ironic_inspection, "sleep", aborted)
    with pytest.raises(exceptions.StaleState):
        _run(rt, record)
    assert ironic.methods().count("get_node") == 2  # the start, one poll


def test_ironic_engine_auto_falls_back_for_lacking_facts(
    rt: Runtime,
    ironic: FakeIronic,
    ironic_node: IronicInspects,
    processed: list[IntrospectionRecord],
) -> None:
    ironic.inventories[UUID] = {"inventory": {**INVENTORY, "disks": []}}
    pacer = _run(rt, _starting(rt, states.AUTO))
    assert pacer.waits == 1 and not processed
    assert ironic.methods()[-1] == "set_power_state"
    kept = json.loads(introspections.get(rt.db, UUID).bmc_data or "{}")
    assert kept["redfish"]["lacking"] == ["local_gb (no drives)"]
    assert kept["redfish"]["engine"] == "ironic"
