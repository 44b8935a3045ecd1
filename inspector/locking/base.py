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

    def holders(self) -> dict[str, str]:
        """Node locks held now in the backend, by any process: lock name
        (``ironic_inspector.<node uuid>``) -> the
        holder's value (``host/run/token`` for a conductor's lock, see
        :func:`holder_host`). Empty where the backend cannot list them."""
        return {}

    def break_lock(self, key: str, value: str) -> bool:
        """Remove the lock ``key`` if it still holds ``value`` (its holder
        is known dead); whether it did. Never done where unsupported."""
        return False

    def stop(self) -> None:
        """Release resources held by the provider."""


def holder_host(value: str) -> str | None:
    """The conductor host a lock's value names, or None (the API's locks
    and other holders carry no name)."""
    parts = value.rsplit("/", 2)
    return parts[0] if len(parts) == 3 and parts[0] else None


def holder_run(value: str) -> str | None:
    """The run of its conductor a lock's value names (``host/run/token``),
    or None."""
    parts = value.rsplit("/", 2)
    return parts[1] if len(parts) == 3 and parts[0] else None
