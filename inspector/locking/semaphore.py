"""In-process node locks for the standalone service."""

import threading

from inspector.locking.base import LockProvider, NodeLock


class _Registry:
    """Shared ``threading.Lock`` objects, one per node, dropped when unused."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, tuple[threading.Lock, int]] = {}

    def checkout(self, name: str) -> threading.Lock:
        with self._guard:
            lock, users = self._locks.get(name, (threading.Lock(), 0))
            self._locks[name] = (lock, users + 1)
            return lock

    def checkin(self, name: str) -> None:
        with self._guard:
            lock, users = self._locks[name]
            if users <= 1:
                del self._locks[name]
            else:
                self._locks[name] = (lock, users - 1)

    def __len__(self) -> int:
        with self._guard:
            return len(self._locks)


class SemaphoreLock(NodeLock):
    def __init__(self, registry: _Registry, node_uuid: str) -> None:
        super().__init__(node_uuid)
        self._registry = registry
        self._lock: threading.Lock | None = None

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        if self._lock is not None:
            return True
        lock = self._registry.checkout(self.name)
        if timeout is not None and blocking:
            taken = lock.acquire(True, timeout)
        else:
            taken = lock.acquire(blocking)
        if taken:
            self._lock = lock
        else:
            self._registry.checkin(self.name)
        return taken

    def release(self) -> None:
        if self._lock is None:
            return
        lock, self._lock = self._lock, None
        lock.release()
        self._registry.checkin(self.name)

    def is_locked(self) -> bool:
        return self._lock is not None


class SemaphoreLockProvider(LockProvider):
    """Locks that only exclude threads of this process."""

    def __init__(self) -> None:
        self._registry = _Registry()

    def get_lock(self, node_uuid: str) -> NodeLock:
        return SemaphoreLock(self._registry, node_uuid)

    def held(self) -> int:
        """Locks currently in use (for tests and diagnostics)."""
        return len(self._registry)
