"""Node locks in the coordination backend, shared by every process (split mode)."""

import logging
import threading
import time
from typing import TYPE_CHECKING

from inspector.coordination.backend import stop_refreshing
from inspector.locking.base import LockProvider, NodeLock
from inspector.locking.remote import RemoteLock

if TYPE_CHECKING:
    from tooz.coordination import CoordinationDriver
    from tooz.locking import Lock

LOG = logging.getLogger(__name__)

RELEASE_RETRY_SECONDS = 60.0
"""How long a release the backend refused (it was restarting) is retried."""


def _retry_release(coordinator: "CoordinationDriver", lock: "Lock", name: str) -> None:
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


class ToozLock(RemoteLock):
    def __init__(self, coordinator: "CoordinationDriver", node_uuid: str) -> None:
        super().__init__(node_uuid)
        self._coordinator = coordinator
        self._lock = coordinator.get_lock(self.name.encode())
        self._held = False

    def _try(self) -> bool:
        self._held = bool(self._lock.acquire(blocking=False))
        return self._held

    def _give_back(self) -> bool:
        self._held = False
        return self._lock.release() is not False

    def _release_later(self) -> None:
        threading.Thread(
            target=_retry_release,
            args=(self._coordinator, self._lock, self.name),
            name=f"release-{self.node_uuid}",
            daemon=True,
        ).start()

    def is_locked(self) -> bool:
        return self._held


class ToozLockProvider(LockProvider):
    """Locks named ``ironic_inspector.<node uuid>`` in the tooz backend."""

    def __init__(self, coordinator: "CoordinationDriver") -> None:
        self._coordinator = coordinator

    def get_lock(self, node_uuid: str) -> NodeLock:
        return ToozLock(self._coordinator, node_uuid)
