"""Spacing of power-ons ([DEFAULT]introspection_delay)."""

import threading
import time
from collections.abc import Callable


class PowerOnPacer:
    """Lets power-ons through no closer together than ``delay`` seconds.

    Many nodes started at once would otherwise all draw inrush current in
    the same second. Each caller reserves the next free slot under a lock and
    sleeps outside it, so waiting callers do not serialise on the lock.
    """

    def __init__(self, delay: Callable[[], float]) -> None:
        self._delay = delay
        self._lock = threading.Lock()
        self._next_slot = 0.0

    def wait(self) -> float:
        """Block until this caller may power a node on; returns seconds slept."""
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next_slot)
            self._next_slot = slot + self._delay()
        pause = slot - now
        if pause > 0:
            time.sleep(pause)
        return pause
