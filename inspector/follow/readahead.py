"""Reads made ahead of their turn on a few threads, taken in order.

A poll that finds many new inspections reads each one's inventory from
Ironic, then records it. One after the other, each turn costs Ironic's
answer plus our recording; with the next few reads already under way
while one is recorded, Ironic's part hides behind ours. The caller still
takes the answers in its own order, and a read's failure reaches it at
that read's turn, as if it had made the call then: what it does on a
failure (stop, skip) is unchanged. A read never taken (the caller stopped
first, or needed no inventory) is thrown away; the reads are only reads.
"""

import collections
import concurrent.futures
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class ReadAhead(Generic[K, V]):
    """``read(keys[i])`` for up to ``depth`` keys from the one the caller
    takes (:meth:`take`) on, each on a pool thread. ``depth`` 1 reads each
    in the caller's thread when taken. A context manager: leaving it
    cancels the reads not begun and waits for those under way."""

    def __init__(self, read: Callable[[K], V], keys: Sequence[K], depth: int) -> None:
        self._read = read
        self._keys = keys
        self._depth = max(1, depth)
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        if self._depth > 1 and len(keys) > 1:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=min(self._depth, len(keys)),
                thread_name_prefix="read-ahead",
            )
        self._pending: collections.deque[concurrent.futures.Future[V]] = (
            collections.deque()
        )
        self._next = 0
        """Index of the first key not submitted."""
        self._taken = 0

    def take(self, index: int) -> Callable[[], V]:
        """The read of ``keys[index]``: calling it returns its answer or
        raises what the read raised. ``index`` goes up by one each call,
        from 0 (the order is the caller's)."""
        if index != self._taken:
            raise ValueError(f"read {index} taken out of turn ({self._taken} next)")
        self._taken += 1
        key = self._keys[index]
        if self._pool is None:
            return lambda: self._read(key)
        self._fill(index)
        future = self._pending.popleft()
        return future.result

    def _fill(self, index: int) -> None:
        assert self._pool is not None
        end = min(len(self._keys), index + self._depth)
        while self._next < end:
            self._pending.append(self._pool.submit(self._read, self._keys[self._next]))
            self._next += 1

    def close(self) -> None:
        for future in self._pending:
            future.cancel()
        self._pending.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> "ReadAhead[K, V]":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
