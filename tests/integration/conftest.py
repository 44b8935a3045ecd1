"""Real servers for the integration tests: Ironic, PostgreSQL, the inspector.

Ironic comes from PyPI into a cached virtualenv (installed once per machine);
every server listens on 127.0.0.1 on a free port and is stopped at the end.
"""

import itertools
import pathlib
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from lab import machines
from lab.enroll import IronicAPI, enroll_one
from lab.inspector_server import InspectorServer
from lab.ironic_server import IronicServer, default_cache_dir
from lab.machines import Machine
from lab.postgres_server import PostgresServer

_indexes = itertools.count(1)


@pytest.fixture(scope="session")
def ironic(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IronicServer]:
    server = IronicServer(default_cache_dir(), tmp_path_factory.mktemp("ironic"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def ironic_api(ironic: IronicServer) -> IronicAPI:
    return IronicAPI(ironic.url)


@pytest.fixture(scope="session")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    server = PostgresServer(tmp_path_factory.mktemp("postgres"))
    server.start()
    yield server
    server.stop()


class Lab:
    """Enrolls fresh machines into the shared Ironic for one test."""

    def __init__(self, api: IronicAPI, seed: int) -> None:
        self.api = api
        self.seed = seed

    def machine(self, enroll_port: bool | None = None) -> tuple[Machine, str]:
        machine = machines.make_machine(next(_indexes) + 1000 * self.seed, self.seed)
        if enroll_port is not None:
            machine.enroll_port = enroll_port
        return machine, enroll_one(self.api, machine)


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
        deadline = time.monotonic() + timeout
        body: dict[str, Any] = {}
        while time.monotonic() < deadline:
            body = self.get(f"/v1/introspection/{node}").json()
            if body.get("state") in wanted:
                return body
            time.sleep(0.05)
        raise AssertionError(f"{node} never reached {wanted}: {body}")
