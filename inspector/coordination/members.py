"""Which conductor gets the next cast: a cached view of the live members."""

import logging
import random
import threading
import time
from collections.abc import Collection
from typing import Any

from tooz import coordination

from inspector import exceptions
from inspector.coordination.backend import GROUP_ID, translated

LOG = logging.getLogger(__name__)


class FixedConductor:
    """Standalone mode: the one conductor in this process."""

    def __init__(self, host: str) -> None:
        self.host = host

    def pick(self, exclude: Collection[str] = ()) -> str:
        if self.host in exclude:
            raise exceptions.ServiceUnavailable(
                reason="the conductor of this process did not take the request"
            )
        return self.host

    def invalidate(self) -> None:
        """Nothing is cached."""

    def hosts(self) -> list[str]:
        return [self.host]


class GroupMembers:
    """Live conductors read from the tooz group, cached for ``ttl`` seconds.

    The API never joins the group; it reads the members, which the backend
    drops once their membership lease expires.
    """

    def __init__(self, coordinator: Any, ttl: float) -> None:
        self._coordinator = coordinator
        self._ttl = ttl
        self._guard = threading.Lock()
        self._hosts: list[str] = []
        self._read_at = -float("inf")

    def invalidate(self) -> None:
        with self._guard:
            self._read_at = -float("inf")

    def hosts(self) -> list[str]:
        with self._guard:
            if time.monotonic() - self._read_at < self._ttl:
                return list(self._hosts)
        with translated("list the conductor group"):
            try:
                members = self._coordinator.get_members(GROUP_ID).get()
            except coordination.GroupNotCreated:
                members = set()
        hosts = sorted(m.decode() for m in members)
        with self._guard:
            self._hosts, self._read_at = hosts, time.monotonic()
        return list(hosts)

    def pick(self, exclude: Collection[str] = ()) -> str:
        """A random live conductor not in ``exclude``.

        :raises ServiceUnavailable: none is available (the API answers 503).
        """
        candidates = [h for h in self.hosts() if h not in exclude]
        if not candidates and exclude:
            self.invalidate()  # the cache may be behind: look once more
            candidates = [h for h in self.hosts() if h not in exclude]
        if not candidates:
            raise exceptions.ServiceUnavailable(
                reason="no conductor is available: none is a live member of "
                "the conductor group; start ironic-inspector-conductor or "
                "check [coordination]backend_url"
            )
        return random.choice(candidates)
