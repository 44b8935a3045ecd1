"""The out-of-band start step, with the BMC's answer and the processing
step replaced (the collection has its own tests in tests/unit/redfish)."""

import json
from typing import Any

import pytest

from inspector import exceptions, states
from inspector.conductor import out_of_band, processing
from inspector.db import claims, introspections, stored_data
from inspector.db.introspections import IntrospectionRecord
from inspector.redfish import collect
from inspector.redfish.sessions import Sessions
from inspector.runtime import Runtime
from tests.unit.conductor.conftest import UUID, FakeIronic, moved_on
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
    pacer = Pacer()
    out_of_band.run(rt, Sessions(rt.conf), pacer, [], record)  # type: ignore[arg-type]
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
    waiting = introspections.transition(
        rt.db,
        UUID,
        states.WAIT,
        expected_version=record.version,
        mode=states.IN_BAND,
        bmc_data="{}",
    )
    assert waiting.bmc_data == "{}" and waiting.mode is None
    failed = introspections.transition(
        rt.db, UUID, states.TIMEOUT, expected_version=waiting.version, error="t"
    )
    assert failed.bmc_data is None
