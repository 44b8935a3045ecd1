"""Ending introspections that run longer than ``[DEFAULT]timeout``."""

import datetime
import logging
from collections.abc import Callable

from inspector import exceptions
from inspector.conductor import power
from inspector.db import hardware_runs, introspections, sweeps, transitions
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)


def end_timed_out(
    rt: Runtime, now: Callable[[], datetime.datetime] = introspections.utcnow
) -> int:
    """End every introspection started more than ``timeout`` seconds before
    ``now()`` whose node is not locked by work in progress; returns how
    many."""
    timeout = rt.conf.timeout
    if not timeout:
        return 0
    cutoff = now() - datetime.timedelta(seconds=timeout)
    ended = 0
    for record in sweeps.timed_out(rt.db, cutoff):
        lock = rt.locks.get_lock(record.uuid)
        if not lock.acquire(blocking=False):
            continue
        try:
            transitions.timed_out(rt.db, record, hardware_runs.new_run(record.uuid))
        except exceptions.StaleState:
            continue
        finally:
            lock.release()
        ended += 1
        LOG.error("Introspection of node %s timed out after %s s", record.uuid, timeout)
        if record.manage_boot:
            power.power_off(rt, record.uuid, "after timeout")
    return ended
