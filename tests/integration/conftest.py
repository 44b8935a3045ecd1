"""Real servers for the integration tests: Ironic, PostgreSQL, the inspector,
split clusters; and the helpers every module shares.

Ironic comes from PyPI into a cached virtualenv (installed once per machine);
every server listens on 127.0.0.1 on a free port and is stopped at the end.
"""

import concurrent.futures
import contextlib
import itertools
import json
import pathlib
import tempfile
import time
from collections.abc import Iterator
from typing import Any, Literal, Protocol
from uuid import uuid4

import pytest
import requests
import sqlalchemy as sa

from lab.machines import hardware
from lab.machines.enroll import IronicAPI, enroll_one
from lab.machines.hardware import Machine
from lab.servers.inspector import ConductorServer, InspectorServer
from lab.servers.ironic import IronicServer
from lab.servers.postgres import PostgresServer
from lab.servers.split_cluster import SplitCluster
from lab.venvs import default_cache_dir
from lab.waiting import wait_until
from tests.integration import cpu_ledger

_indexes = itertools.count(1)

MEMBERSHIP_TIMEOUT = 3
"""Seconds before a dead conductor leaves the group, in every split cluster."""

Node = tuple[Machine, str]
"""An enrolled machine and its node UUID, as Lab.machine() returns them."""


FIRST = (
    "test_takeover_race",
    "test_chaos",
    "test_service_group",
    "test_failover",
    "test_outages",
)
"""The longest modules (per cluster shape), handed to workers first."""


def _groups_files(config: pytest.Config, worker: str = "*") -> list[pathlib.Path]:
    uid = _worker_input(config).get("testrunuid")
    uid = uid or config.getoption("testrunuid", None)
    if not uid:
        return []
    return sorted(
        pathlib.Path(tempfile.gettempdir()).glob(
            f"inspector-test-groups-{uid}-{worker}"
        )
    )


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _worker_input(config: pytest.Config) -> dict[str, Any]:
    """What pytest-xdist tells a worker ({} outside one)."""
    found: dict[str, Any] = getattr(config, "workerinput", {})
    return found


def pytest_configure(config: pytest.Config) -> None:
    """The run's id, which the workers name their groups' files with; the
    CPU ledger when asked for (tests/integration/cpu_ledger.py)."""
    cpu_ledger.install(config)
    if not _is_worker(config) and config.getoption("dist", "no") != "no":
        if not config.getoption("testrunuid", None):
            config.option.testrunuid = uuid4().hex
        config.option.loadscopereorder = False  # the order below stays


def pytest_unconfigure(config: pytest.Config) -> None:
    if not _is_worker(config):
        for path in _groups_files(config):
            path.unlink(missing_ok=True)


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> Iterator[None]:
    """Groups for pytest-xdist's ``--dist loadscope`` (``make integration``).

    A group runs on one worker, in order: one per module, so that a
    module-scoped server starts once, split per parameter of a module-scoped
    parametrized fixture (a cluster shape), whose servers start once per
    parameter anyway. Every worker starts its own session servers (Ironic,
    PostgreSQL) on ports and in directories of its own. The workers write
    the groups to a file the scheduler (below) reads: pytest 9 ignores
    the node id suffix of xdist's own ``xdist_group``. The longest groups
    go first, so that the run does not end waiting for one of them.
    """
    yield

    def rank(item: pytest.Item) -> int:
        return FIRST.index(_module(item)) if _module(item) in FIRST else len(FIRST)

    items.sort(key=rank)  # stable: each module's order stays
    if _is_worker(config):
        groups = {}
        for item in items:
            group = _module(item)
            callspec = getattr(item, "callspec", None)
            info = getattr(item, "_fixtureinfo", None)
            fixtures = getattr(info, "name2fixturedefs", {})
            if callspec is not None:
                for name in sorted(callspec.params):
                    if name in fixtures and fixtures[name][-1].scope == "module":
                        group += f"-{name}={callspec.params[name]}"
            groups[item.nodeid] = group
        uid = _worker_input(config)["testrunuid"]
        worker = _worker_input(config)["workerid"]
        path = pathlib.Path(tempfile.gettempdir()) / (
            f"inspector-test-groups-{uid}-{worker}"
        )
        path.with_suffix(".tmp").write_text(json.dumps(groups))
        path.with_suffix(".tmp").replace(path)


def _module(item: pytest.Item) -> str:
    return item.nodeid.split("::")[0].rsplit("/", 1)[-1].removesuffix(".py")


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadscope`` by the groups the workers wrote."""
    if config.getoption("dist", "no") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):
        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:
                files = _groups_files(config)
                self.groups = json.loads(files[0].read_text()) if files else {}
            return self.groups.get(nodeid) or super()._split_scope(nodeid)

    return ByGroup(config, log)


@pytest.fixture(scope="session")
def ironic(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[IronicServer]:
    server = IronicServer(default_cache_dir(), tmp_path_factory.mktemp("ironic"))
    server.start()
    cpu_ledger.watch(request.config, "ironic", lambda: server.pid)
    yield server
    cpu_ledger.unwatch(request.config, "ironic")
    server.stop()


@pytest.fixture(scope="session")
def ironic_api(ironic: IronicServer) -> IronicAPI:
    return IronicAPI(ironic.url)


@pytest.fixture(scope="session")
def postgres(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PostgresServer]:
    server = PostgresServer(tmp_path_factory.mktemp("postgres"))
    server.start()
    cpu_ledger.watch(request.config, "postgres", lambda: server.pid)
    yield server
    cpu_ledger.unwatch(request.config, "postgres")
    server.stop()


class Lab:
    """Enrolls fresh machines into the shared Ironic for one test."""

    def __init__(self, api: IronicAPI, seed: int) -> None:
        self.api = api
        self.seed = seed

    def _make(self, enroll_port: bool | None = None) -> Machine:
        machine = hardware.make_machine(next(_indexes) + 1000 * self.seed, self.seed)
        if enroll_port is not None:
            machine.enroll_port = enroll_port
        return machine

    def machine(self, enroll_port: bool | None = None) -> tuple[Machine, str]:
        machine = self._make(enroll_port)
        return machine, enroll_one(self.api, machine)

    def machines(self, count: int) -> list[Node]:
        """``count`` machines enrolled side by side (each waits for Ironic's
        verification; one after another they would wait in turn)."""
        made = [self._make() for _ in range(count)]
        with concurrent.futures.ThreadPoolExecutor(min(count, 8) or 1) as pool:
            uuids = list(pool.map(lambda m: enroll_one(self.api, m), made))
        return list(zip(made, uuids, strict=True))


@pytest.fixture
def lab(ironic_api: IronicAPI) -> Lab:
    return Lab(ironic_api, seed=7)


def start_inspector(
    work_dir: pathlib.Path,
    ironic: IronicServer,
    database_url: str | None = None,
    options: dict[str, dict[str, str]] | None = None,
) -> InspectorServer:
    server = InspectorServer(
        work_dir, ironic.url, database_url=database_url, options=options
    )
    server.start()
    return server


def module_inspector(name: str) -> Any:
    """A module's ``inspector`` fixture: one standalone service on the
    shared Ironic for the module's tests, stopped cleanly after them
    (``inspector = module_inspector("inspector-rules")``)."""

    @pytest.fixture(scope="module")
    def inspector(
        ironic: IronicServer, tmp_path_factory: pytest.TempPathFactory
    ) -> Iterator[InspectorServer]:
        server = start_inspector(tmp_path_factory.mktemp(name), ironic)
        yield server
        assert server.stop() == 0, server.log_tail()

    return inspector


@pytest.fixture
def rules_client(inspector: InspectorServer) -> "Iterator[Client]":
    """A client of the module's ``inspector`` that starts and ends each
    test without stored rules."""
    client = Client(inspector.url)
    client.http.delete(client.url + "/v1/rules")
    yield client
    client.http.delete(client.url + "/v1/rules")


class Client:
    """The inspector's public API, as a client sees it."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = requests.Session()

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.http.get(self.url + path, timeout=30, **kwargs)

    def post(self, path: str, **kwargs: Any) -> requests.Response:
        return self.http.post(self.url + path, timeout=30, **kwargs)

    def patch(self, path: str, **kwargs: Any) -> requests.Response:
        return self.http.patch(self.url + path, timeout=30, **kwargs)

    def wait_for(self, node: str, *wanted: str, timeout: float = 30) -> dict[str, Any]:
        """The introspection status of ``node`` once its state is one of
        ``wanted``."""
        body: dict[str, Any] = wait_until(
            lambda: self.get(f"/v1/introspection/{node}").json(),
            timeout,
            f"{node} to reach {' or '.join(wanted)}",
            until=lambda body: body.get("state") in wanted,
        )
        return body


def start(client: Client, uuid: str, query: str = "", *, retry_for: float = 0) -> float:
    """Starts introspecting ``uuid``: the API must answer 202. For
    ``retry_for`` seconds a 503 (no conductor reachable yet, a backend
    restarting) is retried every 0.5 s. The seconds until it was accepted."""
    started = time.monotonic()

    def post() -> tuple[int, str]:
        resp = client.post(f"/v1/introspection/{uuid}{query}")
        assert resp.status_code in (202, 503), resp.text
        return resp.status_code, resp.text

    wait_until(
        post,
        retry_for,
        f"the API to accept the start of {uuid}",
        until=lambda answer: answer[0] == 202,
        interval=0.5,
    )
    return time.monotonic() - started


def introspect(
    client: Client,
    *nodes: Node,
    query: str = "",
    payload: dict[str, Any] | None = None,
    until: Literal["waiting", "finished"] = "finished",
    timeout: float = 30,
) -> list[dict[str, Any]]:
    """Introspects ``nodes`` as a client and their ramdisks do: starts each
    (202) and waits until all are ``waiting``; then, unless ``until`` is
    "waiting", posts each machine's ramdisk data (``payload`` instead, for a
    single node; 200 naming the node) and waits for a final state. Returns
    the last status of each node, in order."""
    assert payload is None or len(nodes) == 1, "payload is for a single node"
    for _machine, uuid in nodes:
        start(client, uuid, query)
    statuses = [client.wait_for(uuid, "waiting", timeout=timeout) for _m, uuid in nodes]
    if until == "waiting":
        return statuses
    for machine, uuid in nodes:
        resp = client.post("/v1/continue", json=payload or machine.payload())
        assert resp.status_code == 200, resp.text
        assert resp.json() == {"uuid": uuid}, resp.text
    return [
        client.wait_for(uuid, "finished", "error", timeout=timeout)
        for _m, uuid in nodes
    ]


def metric(text: str, name: str, **labels: str) -> float:
    """One sample of a Prometheus exposition (0 when absent)."""
    from prometheus_client import parser

    for family in parser.text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return float(sample.value)
    return 0.0


def wait_for_router(
    client: Client, alive: int, timeout: float = 10, streak: int = 5
) -> None:
    """Waits until the API routes by a view of ``alive`` live conductors.

    The API caches the group members for a second; /metrics reports the
    view of the answering API process (conductors_alive). Under Apache
    several processes answer, hence a streak of agreeing scrapes.
    """
    seen: list[float] = []

    def views() -> list[float]:
        text = client.get("/metrics").text
        seen.append(metric(text, "ironic_inspector_conductors_alive"))
        return seen[-streak:]

    wait_until(
        views,
        timeout,
        f"the API to route by {alive} live conductors ({streak} scrapes agreeing)",
        until=lambda last: last == [alive] * streak,
        interval=0.05,
    )


def kill(conductor: ConductorServer) -> None:
    """SIGKILL, as a crash: it leaves the group only by its membership timeout."""
    import signal

    conductor.signal(signal.SIGKILL)
    conductor.wait_exit(10)
    conductor.stop()  # reaps it; pid is None from now on


def ensure_conductors(
    cluster: SplitCluster, count: int, names: Iterator[str] | None = None
) -> SplitCluster:
    """Forgets stopped conductors and starts new ones until ``count`` run.

    A new one is named from ``names`` (a new host id: the work of a killed
    one must be found as lost) or else ``lab-conductor-<position>``, which
    may reuse a stopped one's name.
    """
    cluster.conductors = [c for c in cluster.conductors if c.pid is not None]
    while len(cluster.conductors) < count:
        if names is not None:
            host = next(names)
        else:
            host = f"lab-conductor-{len(cluster.conductors) + 1}"
        cluster.add_conductor(host)
    return cluster


class SplitFactory(Protocol):
    def __call__(
        self,
        name: str,
        *,
        conductors: int = 3,
        coordination: str = "etcd",
        api_server: str = "local",
        api_processes: int = 2,
        options: dict[str, dict[str, str]] | None = None,
        rpc_transport: str = "oslo",
        membership_timeout: int = MEMBERSHIP_TIMEOUT,
        lock_timeout: int | None = None,
        api_address: str = "127.0.0.1",
    ) -> contextlib.AbstractContextManager[SplitCluster]: ...


def split_factory(
    ironic_url: str,
    postgres: PostgresServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> SplitFactory:
    """What the ``split_cluster`` fixture gives, on the Ironic at
    ``ironic_url`` (another release than the session's)."""

    @contextlib.contextmanager
    def make(
        name: str,
        *,
        conductors: int = 3,
        coordination: str = "etcd",
        api_server: str = "local",
        api_processes: int = 2,
        options: dict[str, dict[str, str]] | None = None,
        rpc_transport: str = "oslo",
        membership_timeout: int = MEMBERSHIP_TIMEOUT,
        lock_timeout: int | None = None,
        api_address: str = "127.0.0.1",
    ) -> Iterator[SplitCluster]:
        cluster = SplitCluster(
            tmp_path_factory.mktemp(name),
            ironic_url,
            conductors=conductors,
            postgres=postgres,
            database=f"inspector_{name}",
            membership_timeout=membership_timeout,
            lock_timeout=lock_timeout,
            options=options,
            api_server=api_server,
            coordination=coordination,
            api_processes=api_processes,
            rpc_transport=rpc_transport,
            etcd_in_memory=True,
            api_address=api_address,
        )
        with cluster:
            yield cluster

    return make


@pytest.fixture(scope="session")
def split_cluster(
    ironic: IronicServer,
    postgres: PostgresServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> SplitFactory:
    """Makes split clusters (API and conductor processes, etcd or Redis,
    RabbitMQ unless ``rpc_transport`` is json-rpc) on the session's Ironic and PostgreSQL: ``with
    split_cluster(name, ...) as cluster``, where ``name`` picks the work
    directory and the database ``inspector_<name>``."""
    return split_factory(ironic.url, postgres, tmp_path_factory)


@pytest.fixture
def db(cluster: SplitCluster) -> Iterator[sa.engine.Engine]:
    """The database of the module's split ``cluster``."""
    engine = sa.create_engine(cluster.database_url)
    yield engine
    engine.dispose()
