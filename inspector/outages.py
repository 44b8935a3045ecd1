"""Logging a backend outage as one line when it starts and one when it ends.

A duty that runs every second (a heartbeat, the sweep, a request handler)
meets an unreachable backend on every run: logging each failure buries the
one line an operator needs. :class:`OutageLog` says it once at WARNING with
the cause, then keeps quiet (DEBUG) apart from a reminder every few
minutes, and says at INFO how long it lasted when the duty works again.
:class:`Quieter` does the same for a third-party logger that logs every
reconnection attempt (oslo.messaging's RabbitMQ driver).
"""

import logging
import re
import threading
import time
from collections.abc import Callable

from inspector.exceptions import first_line

REMIND_EVERY = 300.0
"""Seconds between two reminders that an outage goes on."""

TRIED_WITHIN = 10.0
"""The longest pause between two tries of a failing duty for which the
first success still dates the end of the outage. A duty tried less often
(an API process between two requests) cannot know when the backend came
back: its recovery line gives how long the tries failed instead."""


class OutageLog:
    """The state of one duty against one backend (thread-safe)."""

    def __init__(
        self,
        log: logging.Logger,
        what: str,
        remind_every: float = REMIND_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._log = log
        self.what = what
        """What fails, as the start of a sentence: "Looking for lost work"."""
        self._remind_every = remind_every
        self._clock = clock
        self._guard = threading.Lock()
        self._since: float | None = None
        self._last = 0.0
        """When the last try failed."""
        self._reminded = 0.0
        self._failures = 0

    @property
    def failing(self) -> bool:
        return self._since is not None

    def failed(self, cause: str | BaseException) -> None:
        """The duty failed because a backend is away."""
        text = cause if isinstance(cause, str) else first_line(cause)
        now = self._clock()
        with self._guard:
            self._failures += 1
            self._last = now
            if self._since is None:
                self._since = self._reminded = now
                level, message = logging.WARNING, "%s failed: %s; retrying quietly"
                args: tuple[object, ...] = (self.what, text)
            elif now - self._reminded >= self._remind_every:
                self._reminded = now
                level, message = logging.WARNING, "%s still fails after %.0f s: %s"
                args = (self.what, now - self._since, text)
            else:
                level, message, args = logging.DEBUG, "%s failed: %s", (self.what, text)
        self._log.log(level, message, *args)

    def ok(self) -> None:
        """The duty worked: end the outage, if there was one (cheap when
        there was none: it sits on request paths)."""
        if self._since is None:
            return
        now = self._clock()
        with self._guard:
            if self._since is None:
                return
            since, last, failures = self._since, self._last, self._failures
            self._since, self._failures = None, 0
        if now - last <= TRIED_WITHIN:
            # tried all along: the outage ended between the last two tries
            self._log.info(
                "%s works again after %.0f s (%d failed tries)",
                self.what,
                now - since,
                failures,
            )
        else:
            # nothing tried for a while (no request came): the backend came
            # back at some point of that pause, which is not the outage's
            self._log.info(
                "%s works again; its tries failed for %.0f s (%d failed tries), "
                "then none was made for %.0f s until this one",
                self.what,
                last - since,
                failures,
                now - last,
            )


RECOVERED = re.compile(r"\bReconnected\b")
"""A line of a quieted logger saying that the outage is over
(oslo.messaging: "[...] Reconnected to AMQP server on ...")."""


class Quieter(logging.Filter):
    """Lets a logger's first record at WARNING or above through, then one
    per ``period`` seconds saying how many it held back; lower levels
    always pass, and a line matching ``recovered`` (its "Reconnected" INFO
    line) ends the outage. Other lower lines do not: oslo.messaging's
    heartbeat thread says at INFO that it tries to reconnect, every few
    seconds of a RabbitMQ outage, in each process that cast before."""

    def __init__(
        self, period: float = REMIND_EVERY, recovered: re.Pattern[str] = RECOVERED
    ) -> None:
        super().__init__()
        self._period = period
        self._recovered = recovered
        self._guard = threading.Lock()
        self._last = -float("inf")
        self._held = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            if self._recovered.search(record.getMessage()):
                with self._guard:
                    self._last, self._held = -float("inf"), 0
            return True
        now = time.monotonic()
        with self._guard:
            if now - self._last < self._period:
                self._held += 1
                return False
            held, self._held, self._last = self._held, 0, now
        if held:
            record.msg = f"{record.msg} ({held} similar messages held back)"
        # one line: the reconnection loop's traceback adds nothing
        record.exc_info = None
        record.exc_text = None
        return True


QUIETED_LOGGERS = ("oslo.messaging._drivers.impl_rabbit",)
"""Third-party loggers that log every reconnection attempt at ERROR."""


def quiet_third_party() -> None:
    """Install :class:`Quieter` on :data:`QUIETED_LOGGERS` (once)."""
    for name in QUIETED_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, Quieter) for f in logger.filters):
            logger.addFilter(Quieter())
