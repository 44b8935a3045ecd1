"""The RPC entry points: each cast queues its step, which the work queue
claims and runs under the node's lock, handing over to the step's
workflow; a stale or duplicate cast is dropped."""

from collections.abc import Iterator

import pytest

from inspector import exceptions, states
from inspector.conductor.manager import ConductorManager
from inspector.db import introspections, transitions
from inspector.runtime import Runtime
from tests.unit.conductor.conftest import UUID, FakeIronic

CTXT: dict[str, str] = {}


@pytest.fixture
def manager(rt: Runtime) -> Iterator[ConductorManager]:
    manager = ConductorManager(rt, hooks=[])
    yield manager
    manager.stop(10)


def drained(manager: ConductorManager) -> None:
    """Wait (without sleeping) until the queued steps have run."""
    assert manager.stop(10) == {}


def test_a_start_cast_boots_the_node(
    rt: Runtime, manager: ConductorManager, ironic: FakeIronic
) -> None:
    record = introspections.start(rt.db, UUID, True)
    manager.start_introspection(CTXT, UUID, record.version)
    drained(manager)
    assert ironic.methods() == ["set_boot_device", "set_power_state"]
    assert introspections.get(rt.db, UUID).state == states.WAITING


def test_a_stale_cast_is_dropped(
    rt: Runtime, manager: ConductorManager, ironic: FakeIronic
) -> None:
    record = introspections.start(rt.db, UUID, True)
    manager.start_introspection(CTXT, UUID, record.version - 1)
    drained(manager)
    assert ironic.calls == []
    assert introspections.get(rt.db, UUID).state == states.STARTING


def test_a_failed_step_ends_in_error(
    rt: Runtime, manager: ConductorManager, ironic: FakeIronic
) -> None:
    ironic.fail["set_boot_device"] = exceptions.BaremetalError(reason="no PXE")
    record = introspections.start(rt.db, UUID, True)
    manager.start_introspection(CTXT, UUID, record.version)
    drained(manager)
    failed = introspections.get(rt.db, UUID)
    assert failed.state == states.ERROR
    assert failed.error is not None
    assert failed.error.startswith("Failed to set boot device to PXE: ")


def test_process_and_abort_casts_run_their_steps(
    rt: Runtime, manager: ConductorManager, ironic: FakeIronic
) -> None:
    record = introspections.start(rt.db, UUID, True)
    record = transitions.waiting(rt.db, record)
    record = transitions.posted(rt.db, record, {"inventory": {}})
    manager.process(CTXT, UUID, record.version)
    drained(manager)
    assert introspections.get(rt.db, UUID).state == states.FINISHED
    assert ironic.calls[-1] == ("set_power_state", UUID, "power off")


def test_an_abort_cast_ends_the_introspection(
    rt: Runtime, manager: ConductorManager
) -> None:
    record = introspections.start(rt.db, UUID, True)
    record = transitions.waiting(rt.db, record)
    record = transitions.abort_requested(rt.db, record)
    manager.abort(CTXT, UUID, record.version)
    drained(manager)
    assert introspections.get(rt.db, UUID).error == states.ABORTED_MESSAGE
