"""Periodic tasks on their own OS threads."""

import logging
import threading
import time
from collections.abc import Callable

LOG = logging.getLogger(__name__)

PAUSED_WAIT = 5.0
"""Seconds between two looks at a paused task's interval."""


class PeriodicTask:
    """Calls ``func`` every ``interval()`` seconds until stopped.

    The interval is read before every wait so a SIGHUP-mutated option takes
    effect without a restart; an interval of 0 pauses the task.

    By default the task waits the whole interval after each run ends (a
    fixed delay): right for sweeps whose work grows with what they find,
    which must not run back to back. With ``fixed_rate`` a run starts every
    interval: the wait is the interval less the last run's length, never
    negative, so a run longer than the interval is followed by the next at
    once (runs never overlap and missed ones are not made up). That holds a
    latency bound whatever a run's length: the follower's poll
    (``[ironic_follow]poll_interval``), whose burst of new inspections
    would otherwise push the next poll a whole interval past its own end.
    """

    def __init__(
        self,
        name: str,
        interval: Callable[[], float],
        func: Callable[[], object],
        *,
        fixed_rate: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self._interval = interval
        self._func = func
        self.fixed_rate = fixed_rate
        self._clock = clock
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def delay(self, interval: float, last_start: float | None) -> float:
        """Seconds to wait before the next run; ``last_start`` is when the
        last run started (None: none yet, or the task was paused)."""
        if interval <= 0:
            return PAUSED_WAIT
        if not self.fixed_rate or last_start is None:
            return interval
        return max(0.0, interval - (self._clock() - last_start))

    def _wait(self, seconds: float) -> bool:
        """Wait ``seconds``; True when the task is stopped meanwhile."""
        return self._stop.wait(seconds)

    def _run(self) -> None:
        last_start: float | None = None
        while True:
            interval = self._interval()
            if self._wait(self.delay(interval, last_start)):
                return
            if interval <= 0:
                last_start = None
                continue
            last_start = self._clock()
            try:
                self._func()
            except Exception:
                LOG.exception(
                    "Periodic task %s failed; it will run again in %s s",
                    self.name,
                    interval,
                )
