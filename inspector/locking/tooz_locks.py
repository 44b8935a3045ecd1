"""Node locks in the coordination backend, shared by every process (split mode)."""

import logging
import threading
import time
from typing import Any

from inspector import exceptions
from inspector.coordination.backend import stop_refreshing, translated
from inspector.locking.base import LockProvider, NodeLock

LOG = logging.getLogger(__name__)


POLL_SECONDS = 0.1
"""How often a waiter tries a held node lock again (lock hand-off latency)."""

RELEASE_RETRY_SECONDS = 60.0
"""How long a release the backend refused (it was restarting) is retried."""


def _retry_release(coordinator: Any, lock: Any, name: str) -> None:
    """Release ``lock`` once the backend answers again.

    A release that failed leaves the lock with the coordinator's heartbeat,
    which would keep its lease alive forever and the node locked for good.
    Retry for a while; if the backend stays away, stop refreshing the lease
    so that it runs out by itself.
    """
    deadline = time.monotonic() + RELEASE_RETRY_SECONDS
    delay = 0.5
    while time.monotonic() < deadline:
        time.sleep(delay)
        delay = min(delay * 2, 5.0)
        try:
            lock.release()
        except Exception as exc:  # the backend is still away
            LOG.debug("Releasing lock %s failed again: %s", name, exc)
            continue
        LOG.info("Lock %s released after the coordination backend came back", name)
        return
    stop_refreshing(coordinator, lock)  # its lease expires by itself
    LOG.warning(
        "Lock %s could not be released for %.0f s; its lease will run out",
        name,
        RELEASE_RETRY_SECONDS,
    )


class ToozLock(NodeLock):
    def __init__(self, coordinator: Any, node_uuid: str) -> None:
        super().__init__(node_uuid)
        self._coordinator = coordinator
        self._lock = coordinator.get_lock(self.name.encode())
        self._held = False

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        """Take the lock; when ``blocking``, try every POLL_SECONDS until
        ``timeout`` (forever when None).

        Polling here rather than in the driver: tooz's etcd driver waits
        about 0.7 s between its tries, so a node handed from one conductor to
        another sat idle that long.
        """
        if self._held:
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with translated(f"lock node {self.node_uuid}"):
                self._held = bool(self._lock.acquire(blocking=False))
            if self._held or not blocking:
                return self._held
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(POLL_SECONDS)

    def release(self) -> None:
        if not self._held:
            return
        self._held = False
        try:
            with translated(f"unlock node {self.node_uuid}"):
                released = self._lock.release()
        except exceptions.ServiceUnavailable as exc:
            LOG.warning(
                "Could not release lock %s: %s; retrying in the background",
                self.name,
                exc,
            )
            threading.Thread(
                target=_retry_release,
                args=(self._coordinator, self._lock, self.name),
                name=f"release-{self.node_uuid}",
                daemon=True,
            ).start()
            return
        if released is False:
            LOG.warning(
                "Lock %s was no longer ours when released (its lease expired)",
                self.name,
            )

    def is_locked(self) -> bool:
        return self._held


class ToozLockProvider(LockProvider):
    """Locks named ``ironic_inspector.<node uuid>`` in the tooz backend."""

    def __init__(self, coordinator: Any) -> None:
        self._coordinator = coordinator

    def get_lock(self, node_uuid: str) -> NodeLock:
        return ToozLock(self._coordinator, node_uuid)
