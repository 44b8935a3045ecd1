"""GET /healthcheck: oslo.middleware's Healthcheck with the inspector's checks.

The checks are oslo.middleware plugins (entry points in the
``oslo.middleware.healthcheck`` namespace); they always run, and
``[healthcheck]backends`` can add other plugins (``disable_by_file``):

- ``database``: ``SELECT 1`` on the service's own engine;
- ``coordination``: the conductor group can be read and has a live member
  (split mode; in standalone mode the one conductor is this process);
- ``messaging``: an AMQP connection to the broker of ``transport_url`` can
  be opened (split mode; standalone mode has no broker); with
  ``rpc_transport = json-rpc``, at least one live conductor's endpoint
  answers a ping (the details name each).

Each check runs on a worker thread with ``[healthcheck]check_timeout``: a
backend that hangs fails its check instead of hanging the request, and a
check still running from an earlier request is waited for, not started
again. Reasons are always shown; the details (which URL, how long, which
conductors) only with ``[healthcheck]detailed``.
"""

import concurrent.futures
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from oslo_config import cfg
from oslo_middleware import healthcheck
from oslo_middleware.healthcheck import pluginbase

from inspector import exceptions
from inspector.conf.healthcheck import CHECKS

if TYPE_CHECKING:
    from inspector.runtime import ApiRuntime

PATH = "/healthcheck"

_runtimes: dict[int, "ApiRuntime"] = {}
"""The runtime behind each ConfigOpts: plugins are built from the config
object only (oslo.middleware's plugin interface)."""

_pool = concurrent.futures.ThreadPoolExecutor(
    max_workers=6, thread_name_prefix="health"
)


def _redacted(url: str) -> str:
    """A URL without its password, for details shown to operators."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


class _Check(pluginbase.HealthcheckBaseExtension):
    """One backend check with a timeout and at most one run in flight."""

    name = ""

    def __init__(self, oslo_conf: cfg.ConfigOpts, conf: dict[str, Any]) -> None:
        super().__init__(oslo_conf, conf)
        self._guard = threading.Lock()
        self._running: concurrent.futures.Future[tuple[bool, str]] | None = None

    @property
    def runtime(self) -> "ApiRuntime":
        return _runtimes[id(self.oslo_conf)]

    def probe(self) -> tuple[bool, str]:
        """(available, details); raising means unavailable."""
        raise NotImplementedError

    def _timed_probe(self) -> tuple[bool, str]:
        started = time.monotonic()
        ok, details = self.probe()
        return ok, f"{details} ({(time.monotonic() - started) * 1000:.1f} ms)"

    def healthcheck(self, server_port: int) -> pluginbase.HealthcheckResult:
        timeout = self.oslo_conf.healthcheck.check_timeout
        with self._guard:
            if self._running is None or self._running.done():
                self._running = _pool.submit(self._timed_probe)
            running = self._running
        try:
            ok, details = running.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            ok, details = False, f"no answer within {timeout:g} s"
        except Exception as exc:  # a failed check is a result, not an error
            ok, details = False, f"{type(exc).__name__}: {exc}"
        reason = f"{self.name}: {'OK' if ok else 'FAILED'}"
        return pluginbase.HealthcheckResult(ok, reason, details)


class DatabaseCheck(_Check):
    name = "database"

    def probe(self) -> tuple[bool, str]:
        db = self.runtime.db
        db.ping()
        return True, f"{db.describe()} answered"


class CoordinationCheck(_Check):
    name = "coordination"

    def probe(self) -> tuple[bool, str]:
        conf = self.oslo_conf
        if conf.standalone:
            return True, "standalone: in-process locks, this process is the conductor"
        where = _redacted(conf.coordination.backend_url)
        group = self.runtime.conductors
        # read now, not the router's (stale-tolerant) view: the members from
        # the backend, then their states, which are database rows
        alive = group.alive()
        if not alive:
            return False, f"{where}: no conductor is a live member of the group"
        try:
            views = group.conductors(with_work=False)
        except exceptions.ServiceUnavailable as exc:
            # the database's outage, which its own check reports: the group
            # answered, so this check holds
            return True, (
                f"{where}: {len(alive)} conductor(s) alive: {', '.join(alive)} "
                f"(whether they are enabled is unknown: {exc.message})"
            )
        hosts = [v["hostname"] for v in views if v["alive"] and v["enabled"]]
        if not hosts:
            return False, f"{where}: every live conductor is disabled"
        return True, f"{where}: {len(hosts)} conductor(s) alive: {', '.join(hosts)}"


class MessagingCheck(_Check):
    name = "messaging"

    def probe(self) -> tuple[bool, str]:
        import oslo_messaging as messaging

        from inspector.conf import shape

        conf = self.oslo_conf
        if conf.standalone:
            return True, "standalone: in-process (fake://) transport"
        if conf.rpc_transport == "json-rpc":
            return self._json_rpc()
        url = messaging.TransportURL.parse(conf, shape.transport_url(conf) or None)
        if url.transport not in ("rabbit", "amqp"):
            return True, f"{url.transport}: reachability not checked for this driver"
        from inspector.conductor.rpcapi import broker_reachable

        return broker_reachable(url, conf.healthcheck.check_timeout)

    def _json_rpc(self) -> tuple[bool, str]:
        """Each live, enabled conductor's endpoint takes a ping."""
        from inspector.jsonrpc import probe

        rpc = self.runtime.rpc
        router = rpc.router
        hosts = router.routable() if hasattr(router, "routable") else router.hosts()
        endpoint = getattr(router, "endpoint", lambda _host: None)
        return probe.summary(probe.ping_all(rpc.sender, hosts, endpoint))


class InspectorHealthcheck(healthcheck.Healthcheck):
    """oslo.middleware's health check, always with the inspector's checks."""

    def _conf_get(self, key: str, group: str = "healthcheck") -> Any:
        value = super()._conf_get(key, group)
        if key == "backends" and group == "healthcheck":
            return CHECKS + [name for name in value if name not in CHECKS]
        return value


def build(rt: "ApiRuntime", app: Callable[..., Any]) -> Callable[..., Any]:
    """The WSGI application answering GET/HEAD /healthcheck for ``rt``.

    ``app`` answers what the health check leaves alone (a source address
    outside ``[healthcheck]allowed_source_ranges``): a plain 404 from the API.
    """
    _runtimes[id(rt.conf)] = rt
    return InspectorHealthcheck(app, rt.conf)
