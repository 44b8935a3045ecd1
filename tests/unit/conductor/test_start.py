"""The start step in band: PXE and a reboot, paced, fenced, then
``waiting``; and a start whose answer is data makes the processing step."""

import pytest

from inspector import exceptions, states
from inspector.conductor import start
from inspector.conductor.in_band import InBand
from inspector.conductor.inspect import Answer
from inspector.db import introspections, stored_data
from inspector.db.introspections import IntrospectionRecord
from inspector.runtime import Runtime
from tests.unit.conductor.conftest import UUID, FakeIronic, moved_on, starting


class Pacer:
    """The power-on pacer, without its wait: counts the slots asked for."""

    def __init__(self) -> None:
        self.waits = 0

    def wait(self) -> float:
        self.waits += 1
        return 0.0


def _start(rt: Runtime, pacer: "Pacer", record: IntrospectionRecord) -> None:
    in_band = InBand(rt, pacer)  # type: ignore[arg-type]
    assert start.run(rt, lambda _record: in_band, record) is None


def test_boots_into_the_ramdisk_then_waits(rt: Runtime, ironic: FakeIronic) -> None:
    pacer = Pacer()
    _start(rt, pacer, starting(rt))
    assert pacer.waits == 1
    assert ironic.calls == [
        ("set_boot_device", UUID, "pxe"),
        ("set_power_state", UUID, "rebooting"),
    ]
    assert introspections.get(rt.db, UUID).state == states.WAITING


def test_boot_managed_by_the_operator_touches_nothing(
    rt: Runtime, ironic: FakeIronic
) -> None:
    pacer = Pacer()
    _start(rt, pacer, starting(rt, manage_boot=False))
    assert pacer.waits == 0 and ironic.calls == []
    assert introspections.get(rt.db, UUID).state == states.WAITING


@pytest.mark.parametrize(
    ("method", "message"),
    [
        ("set_boot_device", "Failed to set boot device to PXE: "),
        ("set_power_state", "Failed to power on the node: "),
    ],
)
def test_a_refused_call_names_the_step(
    rt: Runtime, ironic: FakeIronic, method: str, message: str
) -> None:
    ironic.fail[method] = exceptions.BaremetalError(reason="400")
    with pytest.raises(exceptions.InspectorError, match=f"^{message}"):
        _start(rt, Pacer(), starting(rt))
    assert introspections.get(rt.db, UUID).state == states.STARTING


def test_stale_work_touches_nothing(rt: Runtime, ironic: FakeIronic) -> None:
    record = starting(rt)
    moved_on(rt, record)
    with pytest.raises(exceptions.StaleState):
        _start(rt, Pacer(), record)
    assert ironic.calls == []


class Told:
    """An inspection that answers with data at once (as a BMC does)."""

    def inspect(self, record: IntrospectionRecord) -> Answer:
        return Answer(data={"inventory": {"cpu": {"count": 2}}})


def test_data_makes_the_processing_step(rt: Runtime, ironic: FakeIronic) -> None:
    following = start.run(rt, lambda _record: Told(), starting(rt))
    assert following is not None
    assert (following.state, following.mode) == (states.PROCESSING, "out-of-band")
    assert following.owner is None  # the work queue claims it
    assert following == introspections.get(rt.db, UUID)
    stored = stored_data.get(rt.db, UUID, processed=False)
    assert stored == {"inventory": {"cpu": {"count": 2}}}
    assert ironic.calls == []
