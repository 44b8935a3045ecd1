"""The abort step: power off (when the boot is ours), end as canceled."""

import pytest

from inspector import exceptions, states
from inspector.conductor import abort
from inspector.db import hardware_runs, introspections, transitions
from inspector.runtime import Runtime
from tests.unit.conductor.conftest import (
    UUID,
    FakeIronic,
    away,
    claimed,
    moved_on,
)


def aborting(
    rt: Runtime, manage_boot: bool = True
) -> introspections.IntrospectionRecord:
    record = introspections.start(rt.db, UUID, manage_boot)
    record = transitions.waiting(rt.db, record)
    record = transitions.abort_requested(rt.db, record)
    return claimed(rt, record)


def test_powers_off_and_ends_canceled(rt: Runtime, ironic: FakeIronic) -> None:
    abort.run(rt, aborting(rt))
    assert ironic.calls == [("set_power_state", UUID, "power off")]
    ended = introspections.get(rt.db, UUID)
    assert ended.state == states.ERROR and ended.error == states.ABORTED_MESSAGE
    # a run in the hardware history, without a record
    [run] = hardware_runs.history(rt.db, UUID, limit=5)
    assert (run.state, run.error) == (states.ERROR, states.ABORTED_MESSAGE)
    assert ended.hardware_run is None


def test_a_failed_power_off_still_ends_it(rt: Runtime, ironic: FakeIronic) -> None:
    ironic.fail["set_power_state"] = away()
    abort.run(rt, aborting(rt))
    assert introspections.get(rt.db, UUID).error == states.ABORTED_MESSAGE


def test_boot_managed_by_the_operator_is_left_on(
    rt: Runtime, ironic: FakeIronic
) -> None:
    abort.run(rt, aborting(rt, manage_boot=False))
    assert ironic.calls == []
    assert introspections.get(rt.db, UUID).state == states.ERROR


def test_stale_work_touches_nothing(rt: Runtime, ironic: FakeIronic) -> None:
    record = aborting(rt)
    moved_on(rt, record)
    with pytest.raises(exceptions.StaleState):
        abort.run(rt, record)
    assert ironic.calls == []
    assert introspections.get(rt.db, UUID).state == states.ABORTING
