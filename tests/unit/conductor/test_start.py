"""The start step: PXE and a reboot, paced, fenced, then ``waiting``."""

import pytest

from inspector import exceptions, states
from inspector.conductor import start
from inspector.db import introspections
from inspector.runtime import Runtime
from tests.unit.conductor.conftest import UUID, FakeIronic, moved_on, starting


class Pacer:
    """The power-on pacer, without its wait: counts the slots asked for."""

    def __init__(self) -> None:
        self.waits = 0

    def wait(self) -> float:
        self.waits += 1
        return 0.0


def test_boots_into_the_ramdisk_then_waits(rt: Runtime, ironic: FakeIronic) -> None:
    pacer = Pacer()
    start.run(rt, pacer, starting(rt))  # type: ignore[arg-type]
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
    start.run(rt, pacer, starting(rt, manage_boot=False))  # type: ignore[arg-type]
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
        start.run(rt, Pacer(), starting(rt))  # type: ignore[arg-type]
    assert introspections.get(rt.db, UUID).state == states.STARTING


def test_stale_work_touches_nothing(rt: Runtime, ironic: FakeIronic) -> None:
    record = starting(rt)
    moved_on(rt, record)
    with pytest.raises(exceptions.StaleState):
        start.run(rt, Pacer(), record)  # type: ignore[arg-type]
    assert ironic.calls == []
