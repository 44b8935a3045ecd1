"""Ending introspections that run longer than ``[DEFAULT]timeout``, on an
injected clock."""

from oslo_config import cfg

from inspector import states
from inspector.conductor import timeouts
from inspector.db import hardware_runs, introspections
from inspector.runtime import Runtime
from tests.unit.conductor.conftest import UUID, Clock, FakeIronic, posted


def test_ends_only_what_ran_too_long_and_powers_it_off(
    rt: Runtime, conf: cfg.ConfigOpts, ironic: FakeIronic
) -> None:
    conf.set_override("timeout", 60)
    clock = Clock()
    posted(rt)
    clock.advance(59)
    assert timeouts.end_timed_out(rt, clock) == 0
    clock.advance(2)
    assert timeouts.end_timed_out(rt, clock) == 1
    ended = introspections.get(rt.db, UUID)
    assert ended.state == states.ERROR and ended.error == states.TIMEOUT_MESSAGE
    assert ironic.calls == [("set_power_state", UUID, "power off")]
    [run] = hardware_runs.history(rt.db, UUID, limit=5)
    assert (run.state, run.error) == (states.ERROR, states.TIMEOUT_MESSAGE)
    assert timeouts.end_timed_out(rt, clock) == 0  # final: not again


def test_a_node_locked_by_work_is_left_for_later(
    rt: Runtime, conf: cfg.ConfigOpts
) -> None:
    conf.set_override("timeout", 60)
    clock = Clock()
    posted(rt)
    clock.advance(61)
    lock = rt.locks.get_lock(UUID)
    assert lock.acquire()
    try:
        assert timeouts.end_timed_out(rt, clock) == 0
    finally:
        lock.release()
    assert timeouts.end_timed_out(rt, clock) == 1


def test_boot_managed_by_the_operator_is_left_on(
    rt: Runtime, conf: cfg.ConfigOpts, ironic: FakeIronic
) -> None:
    conf.set_override("timeout", 60)
    clock = Clock()
    posted(rt, manage_boot=False)
    clock.advance(61)
    assert timeouts.end_timed_out(rt, clock) == 1
    assert ironic.calls == []


def test_no_timeout_ends_nothing(rt: Runtime, conf: cfg.ConfigOpts) -> None:
    conf.set_override("timeout", 0)
    clock = Clock()
    posted(rt)
    clock.advance(10**6)
    assert timeouts.end_timed_out(rt, clock) == 0
