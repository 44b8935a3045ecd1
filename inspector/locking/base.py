"""The per-node lock interface shared by every locking backend."""

import abc
import types


class NodeLock(abc.ABC):
    """An exclusive lock on one node's introspection work."""

    def __init__(self, node_uuid: str) -> None:
        self.node_uuid = node_uuid
        self.name = f"ironic_inspector.{node_uuid}"

    @abc.abstractmethod
    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        """Take the lock; returns False when not blocking (or timed out)."""

    @abc.abstractmethod
    def release(self) -> None:
        """Give the lock back; releasing a lock not held is a no-op."""

    @abc.abstractmethod
    def is_locked(self) -> bool:
        """Whether this object holds the lock now."""

    def __enter__(self) -> "NodeLock":
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> None:
        self.release()


class LockProvider(abc.ABC):
    """Hands out node locks; one per process, chosen at start-up."""

    @abc.abstractmethod
    def get_lock(self, node_uuid: str) -> NodeLock:
        """A lock object for ``node_uuid`` (not yet acquired)."""

    def stop(self) -> None:
        """Release resources held by the provider."""
