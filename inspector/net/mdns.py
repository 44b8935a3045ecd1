"""Publishing the API by multicast DNS (``[DEFAULT]enable_mdns``, ``[mdns]``).

What ironic-inspector did, for ramdisks booted with
``ipa-inspection-callback-url=mdns``: the service registers the instance
``baremetal-introspection`` of the service type ``_openstack._tcp.local.``,
whose SRV record gives the port, whose A/AAAA records give the addresses and
whose TXT record carries ``protocol`` (when the port is not the scheme's
own), ``path`` (never: the API is served at the root) and ``[mdns]params``.
ironic-python-agent's client turns that back into ``scheme://address:port``
and appends ``/v1/continue``.

Upstream published the endpoint it found in the Keystone catalog
(``[service_catalog]``); this service publishes its own listener: the scheme
of ``use_ssl``, ``listen_port``, and ``listen_address``, or when that is a
wildcard the addresses of ``[mdns]interfaces`` (all of the host's when
unset). :func:`endpoint` builds that from the options alone (unit-tested);
:class:`Publisher` runs zeroconf. zeroconf is imported only here and only
when a :class:`Publisher` starts, so neither the API process nor a process
with ``enable_mdns = False`` loads it.

A failure to publish is logged (which addresses, why) and the service runs
on unpublished: ramdisks with a callback URL on their command line do not
need mDNS.
"""

import dataclasses
import ipaddress
import logging
import socket
import threading
import time
from typing import Any

from oslo_config import cfg

from inspector.net.address import is_ip, is_wildcard, url_host

LOG = logging.getLogger(__name__)

SERVICE_TYPE = "_openstack._tcp.local."
"""The service type of every OpenStack service published by mDNS."""

SERVICE_NAME = "baremetal-introspection"
"""The instance the agent looks up: the service type of this API."""

FIRST_RETRY_DELAY = 0.1
"""Seconds before the second registration attempt; doubles after each."""

_DEFAULT_PORTS = {"http": 80, "https": 443}


class PublishError(Exception):
    """The endpoint cannot be published; the message says why."""


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """What is published: the records of :data:`SERVICE_NAME`."""

    scheme: str
    port: int
    addresses: tuple[str, ...]
    """IP addresses (A and AAAA records), as text."""
    server: str | None
    """The SRV record's host name (with a trailing dot) when the service
    listens on a named host; None when it listens on addresses, so that
    zeroconf uses the instance name, under ``.local.``, and the agent the
    address it can route to."""
    properties: dict[str, str]
    """The TXT record."""

    @property
    def urls(self) -> list[str]:
        """The URLs an agent may resolve this to (one per address, or the
        host name's): what a client's ``get_endpoint`` returns."""
        if self.server is not None:
            return [f"{self.scheme}://{self.server.rstrip('.')}:{self.port}"]
        return [
            f"{self.scheme}://{url_host(address)}:{self.port}"
            for address in self.addresses
        ]

    @property
    def full_name(self) -> str:
        return f"{SERVICE_NAME}.{SERVICE_TYPE}"


def host_addresses() -> dict[str, str]:
    """Every IP address of this host, mapped to its interface's name,
    without loopback and IPv6 link-local addresses (an agent cannot use
    those without a scope)."""
    import ifaddr

    found: dict[str, str] = {}
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            text = ip.ip if isinstance(ip.ip, str) else ip.ip[0]
            parsed = ipaddress.ip_address(text)
            if parsed.is_loopback or (parsed.version == 6 and parsed.is_link_local):
                continue
            found.setdefault(text, adapter.nice_name)
    return found


def endpoint(conf: cfg.ConfigOpts, local: dict[str, str] | None = None) -> Endpoint:
    """The endpoint the options describe. ``local`` is :func:`host_addresses`
    (read when needed and not given).

    :raises PublishError: when there is no TCP listener to publish
        (``listen_unix_socket``) or no address to publish it on.
    """
    if conf.listen_unix_socket:
        raise PublishError(
            f"the API listens on the Unix socket {conf.listen_unix_socket}, "
            "which no agent can reach: publish the front end's URL by other "
            "means, or give the ramdisk ipa-inspection-callback-url"
        )
    scheme = "https" if conf.use_ssl else "http"
    port = int(conf.listen_port)
    listen = str(conf.listen_address)
    server = None
    if is_wildcard(listen):
        if conf.mdns.interfaces:
            addresses = list(conf.mdns.interfaces)
        else:
            if local is None:
                local = host_addresses()
            addresses = [
                a
                for a in local
                if ipaddress.ip_address(a).version == 4 or listen == "::"
            ]
    elif is_ip(listen):
        addresses = [listen]
    else:  # a host name: publish it, and the addresses it resolves to
        server = listen if listen.endswith(".") else listen + "."
        try:
            infos = socket.getaddrinfo(listen, port, 0, socket.SOCK_STREAM)
        except OSError as exc:
            raise PublishError(
                f"cannot resolve listen_address {listen}: {exc}"
            ) from exc
        addresses = [str(info[4][0]) for info in infos]
    addresses = list(dict.fromkeys(addresses))  # once each, in order
    if not addresses:
        raise PublishError(
            f"no address to publish (listen_address {listen}, "
            f"[mdns]interfaces {conf.mdns.interfaces or 'unset: all'})"
        )
    properties = {str(k): str(v) for k, v in (conf.mdns.params or {}).items()}
    if _DEFAULT_PORTS[scheme] != port:
        # without it the agent assumes http on port 80 and https elsewhere
        properties["protocol"] = scheme
    # no path: the API is served at the root (as upstream, a path given in
    # [mdns]params is published as given)
    return Endpoint(scheme, port, tuple(addresses), server, properties)


class Publisher:
    """Publishes :func:`endpoint` while the service runs.

    :meth:`start` returns at once: zeroconf probes for the name and
    announces it in a thread of its own (about a second, more with
    conflicts), so the API starts without waiting. :meth:`stop` withdraws
    the record (a goodbye packet) and closes the sockets.
    """

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.conf = conf
        self.published: Endpoint | None = None
        self._zc: Any = None
        self._info: Any = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._publish, name="mdns-publish", daemon=True
        )
        self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the publication to end in success or failure; True
        when the endpoint is published."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.published is not None

    def _interfaces(self, local: dict[str, str]) -> list[str] | None:
        """The addresses of ``[mdns]interfaces`` that belong to this host
        (each other one logged), or None for all interfaces."""
        wanted = list(self.conf.mdns.interfaces or [])
        if not wanted:
            return None
        usable = []
        for address in wanted:
            if not is_ip(address):
                LOG.error(
                    "mDNS: [mdns]interfaces entry %r is not an IP address "
                    "(the option takes the addresses of the interfaces); "
                    "skipped",
                    address,
                )
            elif address not in local:
                LOG.error(
                    "mDNS: [mdns]interfaces address %s is on no interface "
                    "of this host (has %s); skipped",
                    address,
                    ", ".join(f"{a} on {n}" for a, n in local.items()) or "none",
                )
            else:
                usable.append(address)
        if not usable:
            raise PublishError(
                f"none of [mdns]interfaces {', '.join(wanted)} is an address "
                "of this host"
            )
        return usable

    def _publish(self) -> None:
        try:
            local = host_addresses()
            interfaces = self._interfaces(local)
            found = endpoint(self.conf, local)
        except PublishError as exc:
            LOG.error("mDNS: not publishing %s: %s", SERVICE_NAME, exc)
            return
        where = (
            ", ".join(f"{a} ({local.get(a, '?')})" for a in interfaces)
            if interfaces
            else "every interface"
        )
        try:
            self._register(found, interfaces)
        except Exception as exc:  # zeroconf or the socket layer: named and kept
            LOG.error(
                "mDNS: publishing %s as %s on %s failed: %s: %s; the service "
                "runs on without it (ramdisks need ipa-inspection-callback-url)",
                SERVICE_NAME,
                " or ".join(found.urls),
                where,
                type(exc).__name__,
                exc,
            )
            self._close()
            return
        if self._stopping.is_set():
            self._close()
            return
        self.published = found
        LOG.info(
            "mDNS: published %s as %s on %s (TXT %s)",
            SERVICE_NAME,
            " or ".join(found.urls),
            where,
            found.properties,
        )

    def _register(self, found: Endpoint, interfaces: list[str] | None) -> None:
        import zeroconf

        with self._lock:
            if self._stopping.is_set():
                return
            self._zc = zeroconf.Zeroconf(
                interfaces=interfaces or zeroconf.InterfaceChoice.All,
                # with named interfaces zeroconf takes their IP versions
                ip_version=None if interfaces else zeroconf.IPVersion.All,
            )
        self._info = zeroconf.ServiceInfo(
            SERVICE_TYPE,
            found.full_name,
            port=found.port,
            properties=found.properties,
            server=found.server,
            parsed_addresses=list(found.addresses),
        )
        attempts = self.conf.mdns.registration_attempts
        delay = FIRST_RETRY_DELAY
        for attempt in range(1, attempts + 1):
            try:
                self._zc.register_service(self._info)
            except zeroconf.NonUniqueNameException:
                if attempt == attempts:
                    raise PublishError(
                        f"another responder on the network answers for "
                        f"{found.full_name} (after {attempts} attempts)"
                    ) from None
                LOG.warning(
                    "mDNS: %s is taken on the network (attempt %d of %d); "
                    "retrying in %.1f s",
                    found.full_name,
                    attempt,
                    attempts,
                    delay,
                )
                # forget what was learned of the other responder, as upstream
                self._zc.cache = zeroconf.DNSCache()
                if self._stopping.wait(delay):
                    return
                delay *= 2
            else:
                return

    def _close(self) -> None:
        with self._lock:
            zc, self._zc = self._zc, None
        if zc is not None:
            try:
                zc.close()
            except Exception as exc:  # closing must not stop the service's stop
                LOG.warning("mDNS: closing zeroconf failed: %s", exc)

    def stop(self, timeout: float = 10) -> None:
        """Withdraw the record and close zeroconf (clean stop)."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if self.published is not None and self._zc is not None:
            started = time.monotonic()
            try:
                self._zc.unregister_service(self._info)
            except Exception as exc:  # the stop goes on whatever zeroconf says
                LOG.warning("mDNS: withdrawing %s failed: %s", SERVICE_NAME, exc)
            else:
                LOG.info(
                    "mDNS: withdrew %s (%.1f s)",
                    SERVICE_NAME,
                    time.monotonic() - started,
                )
            self.published = None
        self._close()
