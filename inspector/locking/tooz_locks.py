"""Node locks in the coordination backend, shared by every process (split mode)."""

import logging
from typing import Any

from inspector import exceptions
from inspector.coordination.backend import translated
from inspector.locking.base import LockProvider, NodeLock

LOG = logging.getLogger(__name__)


class ToozLock(NodeLock):
    def __init__(self, coordinator: Any, node_uuid: str) -> None:
        super().__init__(node_uuid)
        self._lock = coordinator.get_lock(self.name.encode())
        self._held = False

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        if self._held:
            return True
        import tenacity

        wait: bool | float = blocking
        if blocking and timeout is not None:
            wait = timeout
        try:
            with translated(f"lock node {self.node_uuid}"):
                self._held = bool(self._lock.acquire(blocking=wait))
        except tenacity.RetryError:
            # some drivers give up on a timed wait by raising, not returning
            self._held = False
        return self._held

    def release(self) -> None:
        if not self._held:
            return
        self._held = False
        try:
            with translated(f"unlock node {self.node_uuid}"):
                released = self._lock.release()
        except exceptions.ServiceUnavailable as exc:
            # the lease runs out by itself; nothing else can be done here
            LOG.warning("Could not release lock %s: %s", self.name, exc)
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
