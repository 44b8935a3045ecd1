"""The composition root: what each shape of the service is built of.

One function per shape runs the shape's checks first
(:mod:`inspector.server.checks`), then builds its
:class:`~inspector.runtime.Runtime`, complete, and its services:
:func:`standalone` (``ironic-inspector``), :func:`conductor`
(``ironic-inspector-conductor``), :func:`api` (the WSGI application and
``ironic-inspector-api-wsgi``) and :func:`pxe_agent`. Nothing here judges
an option. The functional tests build the standalone shape through the
same function. Conductor-side modules are imported only by the shapes that
run a conductor, so an API process never loads the workflows or the
processing hooks.
"""

import logging
import os
import uuid
from typing import TYPE_CHECKING, Any

import oslo_messaging as messaging
from oslo_config import cfg

from inspector import exceptions
from inspector.baremetal.client import BaremetalClient
from inspector.conductor.rpcapi import ConductorClient, OsloSender
from inspector.coordination import conductor_state, service_group
from inspector.coordination.members import ENDPOINT, FixedConductor, GroupMembers
from inspector.db import data_store, engine, migration
from inspector.locking import factory
from inspector.runtime import ApiRuntime, Runtime
from inspector.server import checks

if TYPE_CHECKING:
    import flask
    from tooz.coordination import CoordinationDriver

    from inspector.conductor.service import ConductorService
    from inspector.coordination.group import Membership
    from inspector.net.mdns import Publisher
    from inspector.pxe_filter.service import PxeFilterSync

LOG = logging.getLogger(__name__)


def _create_app(rt: ApiRuntime) -> "flask.Flask":
    from inspector.api.app import create_app

    return create_app(rt)


class Standalone:
    """The API and a conductor in one process, over ``fake://``."""

    def __init__(
        self,
        rt: ApiRuntime,
        transport: messaging.Transport,
        conductor: "ConductorService",
        mdns: "Publisher | None" = None,
        pxe: "PxeFilterSync | None" = None,
    ) -> None:
        self.rt = rt
        self.transport = transport
        self.conductor = conductor
        self.mdns = mdns
        self.pxe = pxe
        self.app: flask.Flask = _create_app(rt)

    def start(self) -> None:
        if self.pxe is not None:  # the filter is in place before work comes
            self.pxe.start()
        try:
            self.conductor.start()
        except Exception:
            if self.pxe is not None:
                self.pxe.stop()
            raise
        if self.mdns is not None:
            self.mdns.start()

    def stop(self) -> dict[str, str]:
        """Stop; returns the steps left unfinished after
        ``[DEFAULT]graceful_shutdown_timeout`` (resumed on the next start)."""
        if self.mdns is not None:  # agents stop finding a service that stops
            self.mdns.stop()
        unfinished = self.conductor.stop(self.rt.conf.graceful_shutdown_timeout or None)
        if self.pxe is not None:
            self.pxe.stop()
        self.transport.cleanup()
        self.rt.db.dispose()
        return unfinished


def _wait_for_schema(conf: cfg.ConfigOpts, db: engine.Database) -> None:
    """Long-running services wait for a database that starts after them."""
    migration.wait_for_schema(
        db, conf.database.max_retries, conf.database.retry_interval
    )


def standalone(
    conf: cfg.ConfigOpts,
    *,
    db: engine.Database | None = None,
    baremetal: Any = None,
) -> Standalone:
    """Build the standalone shape (not started). ``db`` and ``baremetal``
    replace the configured database and Ironic client (tests)."""
    from inspector.conductor.service import ConductorService, oslo_server

    checks.standalone(conf)
    if db is None:
        db = engine.from_conf(conf)
        _wait_for_schema(conf, db)
    transport = messaging.get_rpc_transport(conf, url="fake://")
    states = conductor_state.DatabaseStateStore(db)
    rt = ApiRuntime(
        conf=conf,
        db=db,
        baremetal=baremetal if baremetal is not None else BaremetalClient(conf),
        locks=factory.from_conf(conf),
        stores=data_store.DataStores(conf, db),
        rpc=ConductorClient(
            OsloSender(conf, transport), FixedConductor(conf.host, states)
        ),
        conductors=service_group.for_standalone(db, conf),
    )
    conductor = ConductorService(rt, oslo_server(transport), FixedConductor(conf.host))
    publisher = None
    if conf.enable_mdns:  # zeroconf is loaded only then
        from inspector.net.mdns import Publisher

        publisher = Publisher(conf)
    pxe = None
    if conf.pxe_filter.driver in checks.FILTERING:
        from inspector.pxe_filter.service import PxeFilterSync

        pxe = PxeFilterSync(conf, rt.db, rt.baremetal)
    return Standalone(rt, transport, conductor, publisher, pxe)


class Conductor:
    """One conductor of the split shape: RPC server, periodic duties and
    its membership of the conductor group."""

    def __init__(
        self,
        rt: Runtime,
        transport: messaging.Transport | None,
        coordinator: "CoordinationDriver",
        service: "ConductorService",
        membership: "Membership",
    ) -> None:
        self.rt = rt
        self.transport = transport
        self.coordinator = coordinator
        self.service = service
        self.membership = membership

    def start(self) -> None:
        self.service.start()
        try:
            # join only once the RPC server listens: members get casts at once
            self.membership.start()
        except Exception:
            self.service.stop()
            raise

    def stop(self) -> dict[str, str]:
        """Drain, then leave: returns the steps left unfinished (their
        threads still run: the caller ends the process without them).

        The conductor says in the group that it stops (the API routes new
        work elsewhere within its member cache) but stays a member, holding
        its node locks, so that nobody resumes its work while it finishes
        it (``[DEFAULT]graceful_shutdown_timeout``). Then it leaves, and
        the leader resumes what is left. A backend that cannot say it (the
        file driver) is left first, as the only way to stop the routing.
        """
        conf = self.rt.conf
        announced = self.membership.drain()
        if not announced:
            self.membership.stop()
        timeout = conf.graceful_shutdown_timeout or None
        grace = 0.0
        if self.transport is not None and announced:
            # casts the API routed here before its member cache saw the drain
            grace = min(conf.coordination.member_cache_seconds, timeout or 60.0)
        unfinished = self.service.stop(timeout, grace=grace)
        if announced:
            self.membership.stop()
        self.rt.locks.stop()
        self.coordinator.stop()
        if self.transport is not None:
            self.transport.cleanup()
        self.rt.db.dispose()
        return unfinished


def conductor(conf: cfg.ConfigOpts) -> Conductor:
    """Build one conductor of the split shape (not started)."""
    from inspector import version
    from inspector.conductor.rpcapi import RPC_API_VERSION
    from inspector.conductor.service import ConductorService
    from inspector.coordination.backend import describe, start_coordinator
    from inspector.coordination.group import Membership

    checks.conductor(conf)
    # JSON-RPC's files (TLS, htpasswd) are checked before anything connects
    transport, serve, capabilities = _conductor_transport(conf)
    db = engine.from_conf(conf)
    _wait_for_schema(conf, db)
    coordinator = start_coordinator(conf, conf.host)
    run_id = uuid.uuid4().hex
    rt = Runtime(
        conf=conf,
        db=db,
        baremetal=BaremetalClient(conf),
        # its locks name it: the leader breaks them once it left the group
        locks=factory.from_conf(conf, coordinator, holder=f"{conf.host}/{run_id}"),
        stores=data_store.DataStores(conf, db),
        run_id=run_id,
    )
    store = conductor_state.for_split(coordinator, db)
    service = ConductorService(
        rt,
        serve,
        GroupMembers(coordinator, ttl=0),  # the sweep reads it fresh
        enabled=lambda: (store.get(conf.host) or {}).get("enabled", True),
    )
    membership = Membership(
        coordinator,
        conf.host,
        {
            "host": conf.host,
            "rpc_version": RPC_API_VERSION,
            "version": version.string(),
            **capabilities,
        },
        backend=describe(conf.coordination.backend_url),
    )
    return Conductor(rt, transport, coordinator, service, membership)


class MetricsExport:
    """A conductor's recorded values, served on ``[metrics]conductor_port``
    (Prometheus' own HTTP server, in a thread)."""

    def __init__(self, address: str, port: int) -> None:
        self.address = address
        self.port = port
        self._server: Any = None

    def start(self) -> None:
        import prometheus_client

        try:
            self._server, _thread = prometheus_client.start_http_server(
                self.port, addr=self.address
            )
        except OSError as exc:
            raise exceptions.ConfigError(
                f"Invalid configuration: [metrics]conductor_port {self.port} on "
                f"{self.address}: {exc.strerror or exc}"
            ) from exc
        LOG.info(
            "Metrics of this conductor on http://%s:%d/metrics", self.address, self.port
        )

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


def conductor_parts(conf: cfg.ConfigOpts) -> list[Any]:
    """``ironic-inspector-conductor``'s parts: its metrics endpoint (when
    ``[metrics]conductor_port`` is set; served first, so the port is taken
    before the conductor joins) and the conductor."""
    built = conductor(conf)
    port = conf.metrics.conductor_port
    if not port:
        return [built]
    return [MetricsExport(conf.metrics.conductor_address, port), built]


def _conductor_transport(
    conf: cfg.ConfigOpts,
) -> tuple[messaging.Transport | None, Any, dict[str, str]]:
    """How this conductor takes casts: (oslo transport or None, the server
    factory, what it publishes in the group). Bad JSON-RPC options (TLS
    files, htpasswd) fail here, before anything connects."""
    from inspector.conductor.service import oslo_server

    if conf.rpc_transport != "json-rpc":
        transport = messaging.get_rpc_transport(conf)
        return transport, oslo_server(transport), {}
    from inspector.jsonrpc import endpoint
    from inspector.jsonrpc.server import JsonRpcServer

    url = endpoint.advertised(conf)
    checked = JsonRpcServer(conf, None)  # checks the options now

    def serve(manager: Any) -> JsonRpcServer:
        checked.bind(manager)
        return checked

    return None, serve, {ENDPOINT: url}


def _sender(conf: cfg.ConfigOpts, resolve: Any) -> Any:
    """The API's sender for [DEFAULT]rpc_transport, and its oslo transport
    (None on json-rpc: no connection to transport_url is ever opened).
    ``resolve`` gives a conductor's published URL (json-rpc)."""
    if conf.rpc_transport == "json-rpc":
        from inspector.jsonrpc.client import JsonRpcSender

        return JsonRpcSender(conf, resolve), None
    transport = messaging.get_rpc_transport(conf)
    return OsloSender(conf, transport), transport


class Api:
    """The split-mode API: the Flask app and the connections behind it.

    The API does not join the conductor group: it reads the live members
    (cached), takes node locks in the coordination backend, and casts work
    to a conductor over the message bus.
    """

    def __init__(
        self,
        rt: ApiRuntime,
        transport: messaging.Transport | None,
        coordinator: "CoordinationDriver",
    ) -> None:
        self.runtime = rt
        self.transport = transport
        self.coordinator = coordinator
        self.app: flask.Flask = _create_app(rt)

    def start(self) -> None:
        """Nothing to start: built ready to serve, its server starts it."""

    def stop(self) -> None:
        self.runtime.locks.stop()
        try:
            self.coordinator.stop()
        except Exception as exc:  # stopping must go on whatever the backend says
            LOG.warning("Stopping the coordinator failed: %s", exc)
        if self.transport is not None:
            self.transport.cleanup()
        self.runtime.db.dispose()


def api(conf: cfg.ConfigOpts) -> Api:
    """Build the split-mode API service (ready to serve)."""
    from inspector.coordination.backend import start_coordinator

    checks.api(conf)
    # the transport's options are checked before anything connects; the
    # conductors' URLs come from the group, read later
    members: GroupMembers | None = None

    def resolve(host: str) -> str | None:
        return members.endpoint(host) if members is not None else None

    sender, transport = _sender(conf, resolve)
    try:
        db = engine.from_conf(conf)
        migration.ensure_schema(db)
        # a private member id: API processes never join the group
        coordinator = start_coordinator(conf, f"{conf.host}.api.{os.getpid()}")
    except Exception:
        if transport is not None:
            transport.cleanup()
        raise
    store = conductor_state.for_split(coordinator, db)
    members = GroupMembers(
        coordinator,
        conf.coordination.member_cache_seconds,
        store,
        stale_ok=True,
        endpoints=conf.rpc_transport == "json-rpc",
    )
    rt = ApiRuntime(
        conf=conf,
        db=db,
        baremetal=BaremetalClient(conf),
        locks=factory.from_conf(conf, coordinator),
        stores=data_store.DataStores(conf, db),
        rpc=ConductorClient(sender, members),
        conductors=service_group.for_split(coordinator, db, store),
    )
    service = Api(rt, transport, coordinator)
    LOG.info(
        "API service of %s ready (split mode, %s transport)",
        conf.host,
        conf.rpc_transport,
    )
    return service


class PxeAgent:
    """``ironic-inspector-pxe-filter``: one DHCP host's filter, fed by the
    database and Ironic (no coordination backend, no broker)."""

    def __init__(self, rt: Runtime, pxe: "PxeFilterSync") -> None:
        self.rt = rt
        self.pxe = pxe

    def start(self) -> None:
        self.pxe.start()

    def stop(self) -> None:
        self.pxe.stop()
        self.rt.db.dispose()


def pxe_agent(conf: cfg.ConfigOpts) -> PxeAgent:
    """Build the PXE filter agent of one DHCP host (not started)."""
    from inspector.pxe_filter.service import PxeFilterSync

    checks.pxe_agent(conf)
    db = engine.from_conf(conf)
    _wait_for_schema(conf, db)
    from inspector.locking.semaphore import SemaphoreLockProvider

    # the agent takes no node lock: it only reads
    rt = Runtime(
        conf=conf,
        db=db,
        baremetal=BaremetalClient(conf),
        locks=SemaphoreLockProvider(),
        stores=data_store.DataStores(conf, db),
    )
    return PxeAgent(rt, PxeFilterSync(conf, db, rt.baremetal))
