"""Waiting for a condition: the one poll loop of the lab and every test layer.

A test that waits for something another thread or process does polls for
it here, with a deadline, instead of sleeping a fixed time: it goes on as
soon as the thing has happened and, when it has not, fails saying what it
waited for and what it saw last.
"""

import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class NotInTime(TimeoutError, AssertionError):
    """A wait ran out: a failed assertion to pytest, a TimeoutError to the lab."""


def wait_until(
    poll: Callable[[], T],
    timeout: float,
    what: str,
    *,
    until: Callable[[T], Any] = bool,
    interval: float = 0.05,
    ignoring: type[BaseException] | tuple[type[BaseException], ...] = (),
) -> T:
    """Call ``poll`` until ``until`` holds for what it returns; return that.

    ``poll`` runs at once, then every ``interval`` seconds (0: as fast as
    it answers) until ``timeout`` seconds have passed. By default its
    result itself must be true. An exception of a class in ``ignoring``
    counts as "not yet" (a server still starting refuses connections).

    :param what: what is waited for, as the failure names it ("the API to
        answer", "every node to end").
    :raises NotInTime: ``what`` did not happen within ``timeout``; the
        message names it and the last value (or ignored exception) seen.
    """
    deadline = time.monotonic() + timeout
    while True:
        seen: object
        try:
            value = poll()
        except ignoring as exc:
            seen = exc
        else:
            if until(value):
                return value
            seen = value
        if time.monotonic() >= deadline:
            raise NotInTime(
                f"Waited {timeout:g} s for {what}; last seen: {_short(seen)}"
            )
        time.sleep(interval)


def _short(value: object, limit: int = 2000) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
