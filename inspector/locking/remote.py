"""What every node lock kept in a coordination backend does alike: polling
a held lock, backend failures as 503-class errors, and a release the
backend refused retried in the background."""

import abc
import logging
import time

from inspector import exceptions
from inspector.coordination.backend import translated
from inspector.locking.base import NodeLock

LOG = logging.getLogger(__name__)

POLL_SECONDS = 0.1
"""How often a waiter tries a held node lock again (lock hand-off latency).

Polling here rather than in a driver: tooz's etcd driver waits about 0.7 s
between its tries, so a node handed from one conductor to another sat idle
that long."""


class RemoteLock(NodeLock):
    """A node lock in a backend shared by every process (split mode)."""

    @abc.abstractmethod
    def _try(self) -> bool:
        """One try at the lock: whether it is ours now."""

    @abc.abstractmethod
    def _give_back(self) -> bool:
        """Release the lock held; False when it was no longer ours."""

    @abc.abstractmethod
    def _release_later(self) -> None:
        """The backend refused :meth:`_give_back`: arrange, without
        blocking, for the lock to be released once it answers again, or
        to run out."""

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        """Take the lock; when ``blocking``, try every POLL_SECONDS until
        ``timeout`` (forever when None)."""
        if self.is_locked():
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with translated(f"lock node {self.node_uuid}"):
                if self._try():
                    return True
            if not blocking:
                return False
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(POLL_SECONDS)

    def release(self) -> None:
        if not self.is_locked():
            return
        try:
            with translated(f"unlock node {self.node_uuid}"):
                released = self._give_back()
        except exceptions.ServiceUnavailable as exc:
            LOG.warning(
                "Could not release lock %s: %s; retrying in the background",
                self.name,
                exc,
            )
            self._release_later()
            return
        if not released:
            LOG.warning(
                "Lock %s was no longer ours when released (its lease expired)",
                self.name,
            )
