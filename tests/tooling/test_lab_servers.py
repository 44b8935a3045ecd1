"""lab/servers: every launcher is a Server, and their one start and stop."""

import importlib
import inspect
import pathlib
import pkgutil
import sys
import urllib.request

import pytest

import lab
from lab.machines.redfish_fleet import BmcFleet
from lab.machines.redfish_static import StaticBmc, StaticSystem
from lab.servers.apache import ApacheApiServer
from lab.servers.container import ContainerServer
from lab.servers.etcd import EtcdServer
from lab.servers.inspector import (
    ApiServer,
    ConductorServer,
    InspectorServer,
    PxeAgentServer,
)
from lab.servers.ironic import IronicServer
from lab.servers.ironic_standin import StandinServer
from lab.servers.keystone_standin import KeystoneStandin
from lab.servers.memcached import MemcachedServer
from lab.servers.postgres import PostgresServer
from lab.servers.process import ServerProcess
from lab.servers.rabbitmq import RabbitMQServer
from lab.servers.redfish_emulator import RedfishEmulator
from lab.servers.redis import RedisServer
from lab.servers.server import Server
from lab.servers.socket_proxy import SocketProxy
from lab.servers.split_cluster import SplitCluster
from lab.servers.threaded import ThreadedHttpServer
from lab.servers.upstream import UpstreamServer

LAUNCHERS: list[type[Server]] = [
    ApacheApiServer,
    ApiServer,
    BmcFleet,
    ConductorServer,
    ContainerServer,
    EtcdServer,
    InspectorServer,
    IronicServer,
    KeystoneStandin,
    MemcachedServer,
    PostgresServer,
    PxeAgentServer,
    RabbitMQServer,
    RedfishEmulator,
    RedisServer,
    SocketProxy,
    SplitCluster,
    StandinServer,
    StaticBmc,
    ThreadedHttpServer,
    UpstreamServer,
]
"""Every launcher of the lab; mypy checks each against :class:`Server`."""


def _lab_classes() -> set[type]:
    found = set()
    for info in pkgutil.walk_packages(lab.__path__, "lab."):
        if info.name in ("lab.__main__",):
            continue
        module = importlib.import_module(info.name)
        for _name, value in inspect.getmembers(module, inspect.isclass):
            if value.__module__ == info.name:
                found.add(value)
    return found


def test_every_launcher_is_listed() -> None:
    """A class with start, stop and url anywhere in the lab, or with a
    start in lab/servers, is a launcher: listed, so mypy checks it."""
    launchers = set()
    for cls in _lab_classes():
        has = {name for name in ("start", "stop", "url") if hasattr(cls, name)}
        in_servers = cls.__module__.startswith("lab.servers.")
        if has == {"start", "stop", "url"} or (in_servers and "start" in has):
            if not inspect.isabstract(cls) and cls is not Server:
                launchers.add(cls)
    assert launchers == set(LAUNCHERS)


class Echo(ServerProcess):
    """Python's own HTTP server, as a launcher of the lab would run it."""

    name = "echo"

    def __init__(self, work_dir: pathlib.Path, script: str | None = None) -> None:
        super().__init__(work_dir, "echo.log")
        self.script = script

    def start(self, timeout: float = 10.0) -> None:
        if self.script is None:
            command = [sys.executable, "-m", "http.server", str(self.port)]
            command += ["--bind", "127.0.0.1"]
        else:
            command = [sys.executable, "-c", self.script]
        self._spawn(command, cwd=self.work_dir)
        self._await(self._answers, timeout, f"echo on {self.url}")

    def _answers(self) -> bool:
        with urllib.request.urlopen(self.url, timeout=2):
            return True


def test_a_process_is_up_when_it_answers_and_stops_by_its_pid(
    tmp_path: pathlib.Path,
) -> None:
    server: Server = Echo(tmp_path)
    with Echo(tmp_path) as echo:
        assert echo.pid is not None and not echo.exited
        with urllib.request.urlopen(echo.url, timeout=5) as answer:
            assert answer.status == 200
        pid = echo.pid
    assert echo.pid is None
    assert not pathlib.Path(f"/proc/{pid}").exists()  # reaped
    assert server.stop() is None  # never started: harmless


def test_a_process_that_exits_fails_its_start_with_its_log(
    tmp_path: pathlib.Path,
) -> None:
    echo = Echo(tmp_path, "import sys; print('no port for you'); sys.exit(3)")
    with pytest.raises(RuntimeError) as failed:
        echo.start()
    message = str(failed.value)
    assert message.startswith("echo did not start: its process exited with 3")
    assert "no port for you" in message
    assert echo.pid is None


def test_a_process_that_never_answers_is_stopped(tmp_path: pathlib.Path) -> None:
    echo = Echo(tmp_path, "import time; time.sleep(60)")
    with pytest.raises(RuntimeError, match="Waited 0.5 s for echo on"):
        echo.start(timeout=0.5)
    assert echo.pid is None  # stopped, not left behind


def test_a_server_in_a_thread_serves_from_start_to_stop() -> None:
    bmc = StaticBmc([StaticSystem("one", ["52:54:00:00:00:01"])])
    assert bmc.url == f"http://127.0.0.1:{bmc.port}"
    with bmc:
        with urllib.request.urlopen(bmc.url + "/redfish/v1/", timeout=5) as answer:
            assert answer.status == 200
    with pytest.raises(OSError):
        urllib.request.urlopen(bmc.url + "/redfish/v1/", timeout=2)
    bmc.stop()  # twice is harmless
