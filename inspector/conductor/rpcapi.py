"""Client side of the conductor RPC API (casts only)."""

import logging
import re
from collections.abc import Callable, Collection
from typing import Any, Protocol

import kombu
import kombu.exceptions
import oslo_messaging as messaging
from oslo_config import cfg

from inspector import exceptions

LOG = logging.getLogger(__name__)

TOPIC = "ironic_inspector.conductor"
RPC_API_VERSION = "1.0"
"""1.0: start_introspection, process, reapply, abort."""

MAX_CAST_ATTEMPTS = 3
"""Conductors tried for one cast before the request fails with 503."""

CAST_RETRY = 1
"""Reconnections to the broker one cast may try (about a second each with
oslo.messaging's defaults). A cast never waits for the broker forever: with
RabbitMQ down the request gets its 503 within a few seconds."""

PREPARED_HOSTS = 256
"""Conductor hosts whose prepared RPC client one API process keeps."""


BROKER_ERRORS: tuple[type[Exception], ...] = (
    messaging.MessageDeliveryFailure,
    kombu.exceptions.OperationalError,
    OSError,
)
"""A cast failing with one of these could not reach the broker at all:
every conductor is behind it, so trying others only makes the client wait."""


def broker_of(url: str | None) -> str:
    """The broker's URL without user names and passwords, for messages."""
    if not url:
        return "([DEFAULT]transport_url unset)"
    return re.sub(r"(^[a-z0-9+.-]+://|,)[^/,]*@", r"\1", url, flags=re.I)


def broker_reachable(url: Any, timeout: float) -> tuple[bool, str]:
    """Whether one host of the parsed transport ``url`` (RabbitMQ) accepts
    a connection within ``timeout`` seconds: (reachable, details, one line
    without credentials). The health check and the status command use it."""
    failures = []
    for host in url.hosts:
        target = f"{host.hostname}:{host.port or 5672}"
        connection = kombu.Connection(
            hostname=host.hostname,
            port=host.port or 5672,
            userid=host.username or "guest",
            password=host.password or "guest",
            virtual_host=url.virtual_host or "/",
            connect_timeout=timeout,
        )
        try:
            connection.ensure_connection(
                max_retries=1, interval_start=0, interval_step=0, timeout=timeout
            )
            return True, f"AMQP broker {target} accepted a connection"
        except Exception as exc:  # any failure: say it, try the next host
            reason = exceptions.first_line(exc)
            failures.append(f"{target}: {reason}")
        finally:
            connection.release()
    return False, "no broker accepted a connection: " + "; ".join(failures)


class Router(Protocol):
    """Picks the conductor host a cast goes to."""

    def pick(self, exclude: Collection[str] = ()) -> str: ...

    def invalidate(self) -> None: ...

    def hosts(self) -> list[str]: ...


class Sender(Protocol):
    """Delivers one cast to one conductor host.

    :raises ServiceUnavailable: the transport itself is down (every
        conductor is behind it): the cast stops at once.
    :raises Exception: anything else: this conductor did not take it, try
        another.
    """

    transport: str
    """The transport's name, for messages and the health check."""

    def send(self, host: str, method: str, params: dict[str, Any]) -> None: ...

    def ready(self, host: str) -> None:
        """Whether ``host`` takes casts from this process, as far as the
        sender can tell without casting (raises like :meth:`send`)."""


class OsloSender:
    """``rpc_transport = oslo``: a cast through the message broker."""

    transport = "oslo"

    def __init__(self, conf: cfg.ConfigOpts, transport: messaging.Transport) -> None:
        target = messaging.Target(topic=TOPIC, version=RPC_API_VERSION)
        self._client = messaging.get_rpc_client(transport, target)
        self._broker = broker_of(conf.transport_url)
        self._to: dict[str, Any] = {}
        """Conductor host -> the client prepared for it, made on its first
        cast (``prepare`` builds a target and a call context each time)."""

    def _prepared(self, host: str) -> Any:
        prepared = self._to.get(host)
        if prepared is None:
            if len(self._to) >= PREPARED_HOSTS:  # hosts renamed over time
                self._to.clear()
            prepared = self._client.prepare(server=host, retry=CAST_RETRY)
            self._to[host] = prepared
        return prepared

    def send(self, host: str, method: str, params: dict[str, Any]) -> None:
        try:
            self._prepared(host).cast({}, method, **params)
        except BROKER_ERRORS as exc:
            cause = exceptions.first_line(exc)
            # the caller's outage log says it once, not once per cast
            LOG.debug(
                "Could not cast %s: the message broker %s is unreachable: %s",
                method,
                self._broker,
                cause,
            )
            raise exceptions.ServiceUnavailable(
                reason=f"the message broker {self._broker} is unreachable "
                f"({cause}), so {method} could not be handed to a conductor"
            ) from exc

    def ready(self, host: str) -> None:
        """The broker queues casts for any member: nothing to check here."""


class ConductorClient:
    """Casts work to a conductor picked by ``router``; never waits for results.

    A cast that the picked conductor did not take (the broker refused it,
    the connection dropped, the conductor's endpoint did not answer) is
    tried on another live conductor; after :data:`MAX_CAST_ATTEMPTS`
    failures the caller gets ServiceUnavailable naming each cause. A request
    logs at most one line about it: a warning naming the skipped conductors
    when another one took the cast; nothing when all failed (the 503's
    reason goes to the caller, whose outage log says it once).
    """

    def __init__(self, sender: Sender, router: Router) -> None:
        self._sender = sender
        self._router = router

    @property
    def router(self) -> Router:
        """Where casts go: the live conductors (the health check reads it)."""
        return self._router

    @property
    def transport(self) -> str:
        return self._sender.transport

    @property
    def sender(self) -> Any:
        """What delivers the casts (the health check pings through it)."""
        return self._sender

    def require(self) -> None:
        """Before recording an operator's request: is there a conductor
        that takes work from this process? Conductors the sender finds
        unready (on json-rpc: not answering, or refusing this API's
        credentials or certificate) are skipped like failed casts.

        :raises ServiceUnavailable: none is, naming each cause.
        """
        host, tried, causes = self._first_taker("work", self._sender.ready)
        if host is None:
            raise exceptions.NoConductor(
                reason="no conductor takes work from this API "
                f"(tried {', '.join(tried)}): {'; '.join(causes)}"
            )

    def _cast(self, method: str, **kwargs: Any) -> str:
        host, tried, causes = self._first_taker(
            method, lambda host: self._sender.send(host, method, kwargs)
        )
        if host is None:
            raise exceptions.NoConductor(
                reason=f"could not hand {method} over to a conductor "
                f"(tried {', '.join(tried)}): {'; '.join(causes)}"
            )
        if causes:
            LOG.warning(
                "Conductor(s) did not take %s of node %s (%s); conductor %s did",
                method,
                kwargs.get("uuid"),
                "; ".join(causes),
                host,
            )
        LOG.debug("Cast %s(%s) to conductor %s", method, kwargs, host)
        return host

    def _first_taker(
        self, what: str, attempt: Callable[[str], Any]
    ) -> tuple[str | None, list[str], list[str]]:
        """Tries ``attempt`` on live conductors, at most
        :data:`MAX_CAST_ATTEMPTS`: (the host that took it or None, the hosts
        that did not, their causes). A ServiceUnavailable from ``attempt``
        (the transport itself is down) or from the router with nothing tried
        yet is raised at once."""
        tried: list[str] = []
        causes: list[str] = []
        while len(tried) < MAX_CAST_ATTEMPTS:
            try:
                host = self._router.pick(exclude=tried)
            except exceptions.ServiceUnavailable:
                if not causes:
                    raise
                break
            try:
                attempt(host)
            except exceptions.ServiceUnavailable:
                raise
            except Exception as exc:  # any failure means it was not taken
                cause = exceptions.first_line(exc)
                LOG.debug("Conductor %s did not take %s: %s", host, what, cause)
                tried.append(host)
                causes.append(f"{host}: {cause}")
                self._router.invalidate()
                continue
            return host, tried, causes
        return None, tried, causes

    def start_introspection(self, uuid: str, version: int) -> str:
        return self._cast("start_introspection", uuid=uuid, version=version)

    def process(self, uuid: str, version: int) -> str:
        return self._cast("process", uuid=uuid, version=version)

    def reapply(self, uuid: str, version: int) -> str:
        return self._cast("reapply", uuid=uuid, version=version)

    def abort(self, uuid: str, version: int) -> str:
        return self._cast("abort", uuid=uuid, version=version)
