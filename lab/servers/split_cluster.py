"""Split mode on loopback: etcd, RabbitMQ (unless JSON-RPC carries the
casts), PostgreSQL, the API, N conductors."""

import concurrent.futures
import logging
import pathlib
import socket
import subprocess
import time
from typing import TypeVar

from lab.servers import loopback
from lab.servers.apache import ApacheApiServer
from lab.servers.etcd import EtcdServer
from lab.servers.inspector import (
    ApiServer,
    ConductorServer,
    InspectorServer,
    PxeAgentServer,
)
from lab.servers.postgres import PostgresServer
from lab.servers.rabbitmq import RabbitMQServer
from lab.servers.redis import RedisServer

LOG = logging.getLogger(__name__)

P = TypeVar("P", bound=InspectorServer)

API_SERVERS = ("local", "apache")
"""Where the split API runs: its own threaded server, or Apache/mod_wsgi."""

RPC_TRANSPORTS = ("oslo", "json-rpc", "json-rpc-tls")
"""How the API hands work to the conductors: RabbitMQ, or each conductor's
JSON-RPC endpoint (no broker runs then), plain or over TLS with a
self-signed certificate the API trusts."""


class SplitCluster:
    """Every server of the split shape, private to ``work_dir``.

    ``postgres`` may be shared with other users of the same test session;
    the cluster then uses its own database on it.
    """

    def __init__(
        self,
        work_dir: pathlib.Path,
        ironic_url: str,
        conductors: int = 2,
        postgres: PostgresServer | None = None,
        database: str = "inspector",
        membership_timeout: int = 30,
        options: dict[str, dict[str, str]] | None = None,
        api_server: str = "local",
        lock_timeout: int | None = None,
        coordination: str = "etcd",
        api_processes: int = 2,
        rpc_transport: str = "oslo",
        etcd_in_memory: bool = False,
        api_address: str = "127.0.0.1",
    ) -> None:
        if rpc_transport not in RPC_TRANSPORTS:
            raise ValueError(
                f"rpc_transport must be one of {', '.join(RPC_TRANSPORTS)}, "
                f"not {rpc_transport!r}"
            )
        self.rpc_tls = rpc_transport == "json-rpc-tls"
        self.rpc_transport = rpc_transport.removesuffix("-tls")
        if api_server not in API_SERVERS:
            raise ValueError(
                f"api_server must be one of {', '.join(API_SERVERS)}, "
                f"not {api_server!r}"
            )
        self.api_server = api_server
        if api_server == "apache" and api_address != "127.0.0.1":
            raise ValueError("the lab's Apache listens on 127.0.0.1 only")
        self.api_address = api_address
        """The loopback address the local API listens on."""
        self.api_processes = api_processes
        """Apache's daemon processes (the shipped vhost has 4)."""
        self.work_dir = pathlib.Path(work_dir)
        self.ironic_url = ironic_url
        self.conductor_count = conductors
        self.coordination = coordination
        self.etcd = EtcdServer(self.work_dir / "etcd", in_memory=etcd_in_memory)
        self.redis = RedisServer(self.work_dir / "redis")
        self.rabbit = RabbitMQServer(self.work_dir / "rabbitmq")
        self._own_postgres = postgres is None
        self.postgres = postgres or PostgresServer(self.work_dir / "postgres")
        self.database = database
        self.membership_timeout = membership_timeout
        self.lock_timeout = lock_timeout
        """The node locks' lease; unset, tooz takes the request timeout (10 s
        here; 30 s, tooz's default, where no timeout is given)."""
        self.options = options or {}
        self.api: ApiServer | None = None
        self.conductors: list[ConductorServer] = []
        self._timeout = 60.0
        """Each server's own start's (set by :meth:`start`)."""

    @property
    def backend_url(self) -> str:
        """The tooz URL every process of the cluster uses."""
        server = self.redis if self.coordination == "redis" else self.etcd
        options: dict[str, object] = {
            "membership_timeout": self.membership_timeout,
            "timeout": 10,
        }
        if self.lock_timeout is not None:
            options["lock_timeout"] = self.lock_timeout
        return server.tooz_url(**options)

    def _options(self, host: str) -> dict[str, dict[str, str]]:
        groups: dict[str, dict[str, str]] = {
            "DEFAULT": {
                "standalone": "False",
                "host": host,
                "rpc_transport": self.rpc_transport,
            },
            "coordination": {
                "backend_url": self.backend_url,
                "member_cache_seconds": "1",
            },
        }
        if self.rpc_transport == "oslo":
            groups["DEFAULT"]["transport_url"] = self.rabbit.url
        else:
            groups["json_rpc"] = {"host_ip": "127.0.0.1"}
            if self.rpc_tls:
                cert, key = self._rpc_certificate()
                groups["json_rpc"].update(
                    use_ssl="True", cert_file=cert, key_file=key, cafile=cert
                )
        for group, values in self.options.items():
            groups.setdefault(group, {}).update(values)
        return groups

    def _rpc_certificate(self) -> tuple[str, str]:
        """A self-signed certificate for 127.0.0.1 (made once), which the
        API trusts as its own CA file."""
        cert, key = self.work_dir / "json-rpc.crt", self.work_dir / "json-rpc.key"
        if not cert.exists():
            self.work_dir.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                [
                    "openssl", "req", "-x509", "-newkey", "ec",
                    "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert),
                ],
                check=True,
                capture_output=True,
            )  # fmt: skip
        return str(cert), str(key)

    @property
    def database_url(self) -> str:
        return self.postgres.url.rsplit("/", 1)[0] + f"/{self.database}"

    def start(self, timeout: float = 60.0) -> None:
        """Start every server, each within ``timeout``: RabbitMQ (Erlang,
        the slowest to come up) beside the coordination backend, PostgreSQL
        and the API; then the conductors, all at once."""
        started = time.monotonic()
        self._timeout = timeout
        with concurrent.futures.ThreadPoolExecutor(1) as beside:
            rabbit = None
            if self.rpc_transport == "oslo":
                rabbit = beside.submit(self.rabbit.start, timeout)
            try:
                self._start_api_and_backends()
            finally:
                if rabbit is not None:
                    rabbit.result()  # started (and stopped by stop()) or raised
        self.add_conductors(
            [f"lab-conductor-{index}" for index in range(1, self.conductor_count + 1)]
        )
        LOG.info(
            "Split cluster (%d conductors) up in %.1f s",
            len(self.conductors),
            time.monotonic() - started,
        )

    def _start_api_and_backends(self) -> None:
        if self.coordination == "redis":
            self.redis.start(self._timeout)
        else:
            self.etcd.start(self._timeout)
        if self._own_postgres:
            self.postgres.start(self._timeout)
        if self.database != self.postgres.database:
            self.postgres.create_database(self.database)
        if self.api_server == "apache":
            self.api = ApacheApiServer(
                self.work_dir / "api",
                self.ironic_url,
                database_url=self.database_url,
                options=self._options("lab-api"),
                processes=self.api_processes,
            )
        else:
            self.api = ApiServer(
                self.work_dir / "api",
                self.ironic_url,
                database_url=self.database_url,
                options=self._options("lab-api"),
                address=self.api_address,
            )
        self.api.start(self._timeout)  # the schema upgrade, once for everyone

    def add_conductors(self, hosts: list[str]) -> list[ConductorServer]:
        """Start conductors ``hosts`` at once; each is listed in
        :attr:`conductors` in the order given once every start has ended.

        :raises RuntimeError: the first start that failed (the others that
            came up are listed, so :meth:`stop` ends them).
        """
        ports = _distinct_free_ports(len(hosts))
        with concurrent.futures.ThreadPoolExecutor(len(hosts) or 1) as pool:
            starting = [
                pool.submit(self._start_conductor, host, None, port)
                for host, port in zip(hosts, ports, strict=True)
            ]
            concurrent.futures.wait(starting)
        started = [f.result() for f in starting if f.exception() is None]
        self.conductors.extend(started)
        for future in starting:
            if (error := future.exception()) is not None:
                raise error
        return started

    def add_conductor(
        self, host: str, options: dict[str, dict[str, str]] | None = None
    ) -> ConductorServer:
        """Start one more conductor; ``options`` adds to the cluster's."""
        conductor = self._start_conductor(host, options, loopback.free_port())
        self.conductors.append(conductor)
        return conductor

    def _start_conductor(
        self, host: str, options: dict[str, dict[str, str]] | None, port: int
    ) -> ConductorServer:
        given = {"json_rpc": {"port": str(port)}}  # conductors share this host
        if self.rpc_transport != "json-rpc":
            given = {}
        for group, values in (options or {}).items():
            given.setdefault(group, {}).update(values)
        return self._start(ConductorServer, host, given)

    def add_pxe_agent(
        self, host: str, options: dict[str, dict[str, str]] | None = None
    ) -> PxeAgentServer:
        """Start a PXE filter agent on the cluster's configuration,
        ``options`` added (its hostsdir and dnsmasq commands); the caller
        stops it."""
        return self._start(PxeAgentServer, host, options)

    def add_api(
        self, name: str, options: dict[str, dict[str, str]] | None = None
    ) -> ApiServer:
        """One more ``ironic-inspector-api-wsgi`` process on the same
        configuration, ``options`` added (the caller stops it)."""
        return self._start(ApiServer, name, options)

    def _start(
        self, kind: type[P], host: str, options: dict[str, dict[str, str]] | None
    ) -> P:
        """One more process of ``kind`` named ``host``, on the cluster's
        configuration with ``options`` added; the schema is the API's."""
        merged = self._options(host)
        for group, values in (options or {}).items():
            merged.setdefault(group, {}).update(values)
        process = kind(
            self.work_dir / host,
            self.ironic_url,
            database_url=self.database_url,
            options=merged,
        )
        process.start(self._timeout, dbsync=False)
        return process

    @property
    def url(self) -> str:
        assert self.api is not None
        return self.api.url

    def stop(self) -> None:
        for conductor in self.conductors:
            conductor.stop()
        if self.api is not None:
            self.api.stop()
        self.rabbit.stop()
        self.etcd.close()
        self.redis.stop()
        if self._own_postgres:
            self.postgres.stop()

    def __enter__(self) -> "SplitCluster":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def _distinct_free_ports(count: int) -> list[int]:
    """``count`` free ports on 127.0.0.1, all different: each is held until
    every one is found."""
    held = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            held.append(sock)
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in held]
    finally:
        for sock in held:
            sock.close()
