"""Which conductor gets the next cast: a cached view of the live members."""

import logging
import random
import threading
import time
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from tooz import coordination

from inspector import exceptions
from inspector.coordination.backend import GROUP_ID, translated

if TYPE_CHECKING:
    from inspector.coordination.conductor_state import DatabaseStateStore

LOG = logging.getLogger(__name__)

DRAINING = "draining"
"""The member capability a stopping conductor publishes (true): it finishes
its work and gets none (:meth:`inspector.coordination.group.Membership.drain`)."""

ENDPOINT = "rpc_endpoint"
"""The member capability holding a conductor's JSON-RPC URL
(:func:`inspector.jsonrpc.endpoint.advertised`)."""


def endpoint_of(capabilities: Any) -> str | None:
    """The URL a member published, None when it published none (a conductor
    on the oslo transport, or one from before this transport)."""
    if isinstance(capabilities, dict):
        url = capabilities.get(ENDPOINT)
        if isinstance(url, str) and url:
            return url
    return None


def _disabled_reason(state: dict[str, Any] | None) -> str | None:
    """Why the conductor whose document is ``state`` takes no new work
    (None: it does)."""
    if state and not state.get("enabled", True):
        return str(state.get("reason") or "disabled")
    return None


class FixedConductor:
    """Standalone mode: the one conductor in this process."""

    def __init__(self, host: str, store: "DatabaseStateStore | None" = None) -> None:
        self.host = host
        self._store = store

    def pick(self, exclude: Collection[str] = ()) -> str:
        if self.host in exclude:
            raise exceptions.NoConductor(
                reason="the conductor of this process did not take the request"
            )
        state = self._store.get(self.host) if self._store is not None else None
        reason = _disabled_reason(state)
        if reason is not None:
            raise exceptions.NoConductor(
                reason=f"the conductor {self.host} is disabled ({reason}); "
                f"enable it: ironic-inspector-manage conductor enable {self.host}"
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

    def __init__(
        self,
        coordinator: coordination.CoordinationDriver,
        ttl: float,
        store: "DatabaseStateStore | None" = None,
        stale_ok: bool = False,
        endpoints: bool = False,
    ) -> None:
        self._coordinator = coordinator
        self._want_endpoints = endpoints
        """Read each member's published JSON-RPC URL along with the list
        (the API on rpc_transport = json-rpc)."""
        self._endpoints: dict[str, str | None] = {}
        self._ttl = ttl
        self._store = store
        self._stale_ok = stale_ok
        """The API's router: while the backend is away, route by the last
        view instead of failing the request (a cast to a conductor that died
        meanwhile is found by its claim deadline). Never for the takeover
        sweep, which must not act on an old view."""
        self._stale_since: float | None = None
        self._disabled: dict[str, str] = {}
        self._draining: set[str] = set()
        """Members that stop: still in the group, finishing their work, and
        taking no new work (they published ``draining`` when SIGTERMed)."""
        self._guard = threading.Lock()
        self._reading = threading.Lock()
        """Held by the one thread reading the group (single flight)."""
        self._hosts: list[str] = []
        self._read_at = -float("inf")

    def invalidate(self) -> None:
        with self._guard:
            self._read_at = -float("inf")

    def _fresh(self) -> bool:
        return time.monotonic() - self._read_at < self._ttl

    def hosts(self) -> list[str]:
        with self._guard:
            if self._fresh():
                return list(self._hosts)
            seen = self._read_at != -float("inf")
        # one read at a time: the router's other threads keep routing by the
        # view being replaced (stale by one read) instead of each reading the
        # group and every conductor's state again; a caller that must not
        # act on an old view waits for the read and reads again if needed
        if not self._reading.acquire(blocking=not (self._stale_ok and seen)):
            with self._guard:
                return list(self._hosts)
        try:
            with self._guard:
                if self._fresh():  # read by the caller we waited for
                    return list(self._hosts)
            return self._read()
        except exceptions.ServiceUnavailable as exc:
            with self._guard:
                if not self._stale_ok or self._read_at == -float("inf"):
                    raise
                if self._stale_since is None:
                    self._stale_since = time.monotonic()
                    LOG.warning(
                        "Routing by the last known conductors (%s) while "
                        "the coordination backend is away: %s",
                        ", ".join(self._hosts) or "none",
                        exc,
                    )
                return list(self._hosts)
        finally:
            self._reading.release()

    def _read(self) -> list[str]:
        capabilities: dict[bytes, Any] = {}
        with translated("list the conductor group"):
            try:
                # one read for the members, whether each is draining and
                # the endpoints (etcd and Redis hold them in one place)
                capabilities = self._coordinator.get_members_with_capabilities(
                    GROUP_ID
                ).get()
            except coordination.GroupNotCreated:
                capabilities = {}
        hosts = sorted(m.decode() for m in capabilities)
        draining = {
            member.decode()
            for member, caps in capabilities.items()
            if isinstance(caps, dict) and caps.get(DRAINING)
        }
        disabled = {}
        if self._store is not None:  # one statement, whatever the members
            states = self._store.every()
            for host in hosts:
                reason = _disabled_reason(states.get(host))
                if reason is not None:
                    disabled[host] = reason
        endpoints = {}
        if self._want_endpoints:
            endpoints = {
                member.decode(): endpoint_of(caps)
                for member, caps in capabilities.items()
            }
        with self._guard:
            self._hosts, self._read_at = hosts, time.monotonic()
            self._disabled = disabled
            self._draining = draining
            self._endpoints = endpoints
            if self._stale_since is not None:
                LOG.info(
                    "Coordination backend back after %.1f s",
                    time.monotonic() - self._stale_since,
                )
                self._stale_since = None
        return list(hosts)

    def _read_endpoint(self, host: str) -> str | None:
        with translated("read a conductor's endpoint"):
            try:
                capabilities = self._coordinator.get_member_capabilities(
                    GROUP_ID, host.encode()
                ).get()
            except coordination.MemberNotJoined:
                return None  # it left between the two reads
        return endpoint_of(capabilities)

    def endpoint(self, host: str) -> str | None:
        """The JSON-RPC URL ``host`` published (as of the cached read; read
        now for a host the cache has not seen)."""
        with self._guard:
            if host in self._endpoints:
                return self._endpoints[host]
        return self._read_endpoint(host)

    def routable(self) -> list[str]:
        """Live, enabled conductors that are not stopping (as of the same
        cached read). A stopping one is still in :meth:`hosts`: it owns its
        work until it leaves, and the takeover sweep must not resume it."""
        hosts = self.hosts()
        with self._guard:
            return [
                h for h in hosts if h not in self._disabled and h not in self._draining
            ]

    def pick(self, exclude: Collection[str] = ()) -> str:
        """A random live conductor not in ``exclude``.

        :raises ServiceUnavailable: none is available (the API answers 503).
        """
        candidates = [h for h in self.routable() if h not in exclude]
        if not candidates and exclude:
            self.invalidate()  # the cache may be behind: look once more
            candidates = [h for h in self.routable() if h not in exclude]
        if not candidates and self._disabled:
            raise exceptions.NoConductor(
                reason="no conductor is available: every live conductor is "
                f"disabled ({', '.join(sorted(self._disabled))}); enable one with "
                "ironic-inspector-manage conductor enable HOST"
            )
        if not candidates and self._draining:
            raise exceptions.ServiceUnavailable(
                reason="no conductor is available: every live conductor is "
                f"stopping ({', '.join(sorted(self._draining))}); start "
                "ironic-inspector-conductor"
            )
        if not candidates:
            raise exceptions.NoConductor(
                reason="no conductor is available: none is a live member of "
                "the conductor group; start ironic-inspector-conductor or "
                "check [coordination]backend_url"
            )
        return random.choice(candidates)
