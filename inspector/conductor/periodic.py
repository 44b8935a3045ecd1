"""Periodic tasks on their own OS threads."""

import logging
import threading
from collections.abc import Callable

LOG = logging.getLogger(__name__)


class PeriodicTask:
    """Calls ``func`` every ``interval()`` seconds until stopped.

    The interval is read before every wait so a SIGHUP-mutated option takes
    effect without a restart; an interval of 0 pauses the task.
    """

    def __init__(
        self, name: str, interval: Callable[[], float], func: Callable[[], object]
    ) -> None:
        self.name = name
        self._interval = interval
        self._func = func
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            interval = self._interval()
            if self._stop.wait(interval if interval > 0 else 5.0):
                return
            if interval <= 0:
                continue
            try:
                self._func()
            except Exception:
                LOG.exception(
                    "Periodic task %s failed; it will run again in %s s",
                    self.name,
                    interval,
                )
