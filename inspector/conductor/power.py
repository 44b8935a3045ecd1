"""Powering nodes: on, spaced across the deployment
([DEFAULT]introspection_delay); off, never failing the step."""

import logging
import time
from collections.abc import Callable

from inspector import exceptions
from inspector.db import leases
from inspector.db.engine import Database
from inspector.db.models import utcnow
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)


class PowerOnPacer:
    """Lets ``burst`` power-ons through per window of ``delay`` seconds
    (by default one every ``delay`` seconds), counted over every conductor
    that shares the database.

    Many nodes started at once would otherwise all draw inrush current in
    the same second, and in split mode each conductor pacing only itself
    would multiply the rate by the number of conductors. Each caller
    reserves the next free slot in the database (compare-and-swap, no lock
    held while waiting) and sleeps until it.
    """

    def __init__(
        self,
        delay: Callable[[], float],
        db: Database,
        burst: Callable[[], int] = lambda: 1,
    ) -> None:
        self._delay = delay
        self._burst = burst
        self._db = db

    def wait(self) -> float:
        """Block until this caller may power a node on; returns seconds slept."""
        delay = self._delay()
        if delay <= 0:
            return 0.0
        slot = leases.reserve_slot(self._db, leases.POWER_ON, delay, self._burst())
        pause = (slot - utcnow()).total_seconds()
        if pause > 0:
            time.sleep(pause)
            return pause
        return 0.0


def power_off(rt: Runtime, uuid: str, why: str) -> None:
    """Power the node off; a failure is logged, never raised: the
    introspection ends either way (abort, timeout)."""
    try:
        rt.baremetal.set_power_state(uuid, "power off")
    except exceptions.InspectorError as exc:
        LOG.warning("Could not power off node %s %s: %s", uuid, why, exc)
