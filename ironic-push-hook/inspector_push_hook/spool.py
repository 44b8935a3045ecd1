"""Pushes the service did not take, kept as files until a later
inspection sends them again.

Each push is one file, ``<nanoseconds>-<node uuid>.json`` (the JSON as it
would have been posted), written whole (a hidden file renamed), so the
names sort oldest first. The directory holds at most ``limit`` of them:
the oldest go first. One sender at a time (threads of one conductor, or
conductors sharing the directory) resends them, under an ``flock`` taken
without waiting: another sender skips the spool instead of queueing
behind it.
"""

import contextlib
import fcntl
import logging
import os
import pathlib
import re
import time
import uuid
from collections.abc import Iterator

LOG = logging.getLogger(__name__)

SUFFIX = ".json"
LOCK = ".resend.lock"
_SAFE = re.compile(r"[^A-Za-z0-9-]")


class Spool:
    """The spool directory ``path`` holding at most ``limit`` pushes."""

    def __init__(self, path: str, limit: int) -> None:
        self.path = pathlib.Path(path) if path else None
        self.limit = limit

    @property
    def enabled(self) -> bool:
        return self.path is not None and self.limit > 0

    def entries(self) -> list[pathlib.Path]:
        """The spooled pushes, oldest first."""
        if self.path is None:
            return []
        try:
            names = os.listdir(self.path)
        except FileNotFoundError:
            return []
        return [
            self.path / n
            for n in sorted(names)
            if n.endswith(SUFFIX) and not n.startswith(".")
        ]

    def add(self, data: bytes, node: str) -> pathlib.Path | None:
        """Keep ``data`` (one push of ``node``), then drop the oldest
        beyond the limit; the file, or None when the spool is off.

        :raises OSError: the directory cannot be made or written.
        """
        if self.path is None or not self.enabled:
            return None
        self.path.mkdir(parents=True, exist_ok=True, mode=0o700)
        name = f"{time.time_ns():020d}-{_SAFE.sub('_', node)[:64]}{SUFFIX}"
        target = self.path / name
        scratch = self.path / f".{uuid.uuid4().hex}.tmp"
        # the push may carry the ramdisk's logs: readable by Ironic's user only
        handle = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(scratch, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(scratch)
            raise
        self._trim()
        return target

    def _trim(self) -> None:
        entries = self.entries()
        for old in entries[: max(0, len(entries) - self.limit)]:
            with contextlib.suppress(FileNotFoundError):
                old.unlink()
                LOG.warning(
                    "Inspection push spool %s is full (%d): dropped the oldest "
                    "push, %s",
                    self.path,
                    self.limit,
                    old.name,
                )

    @contextlib.contextmanager
    def resending(self) -> Iterator[bool]:
        """Whether this caller may resend now (True while it holds the
        spool's lock; False when another one does, or there is no spool)."""
        if self.path is None or not self.path.is_dir():
            yield False
            return
        try:
            handle = os.open(self.path / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            LOG.warning("Cannot lock the inspection push spool %s: %s", self.path, exc)
            yield False
            return
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                yield False
                return
            yield True
        finally:
            os.close(handle)  # releases the lock
