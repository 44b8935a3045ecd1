"""A private Redis on loopback (Debian ``redis-server``): the other tooz
backend the conductor service-group tests run on."""

import logging
import pathlib
import shutil
import socket

from lab.servers.process import ServerProcess

LOG = logging.getLogger(__name__)


class RedisServer(ServerProcess):
    """One redis-server with its own directory and port, no persistence."""

    name = "redis"

    def __init__(self, work_dir: pathlib.Path, port: int | None = None) -> None:
        super().__init__(work_dir, "redis.log", port)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def tooz_url(self, **options: object) -> str:
        query = "&".join(f"{k}={v}" for k, v in options.items())
        return self.url + (f"?{query}" if query else "")

    def _ping(self) -> bool:
        with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")

    def start(self, timeout: float = 30.0) -> None:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not pathlib.Path(binary).exists():
            raise RuntimeError(
                "redis-server is not installed: run "
                "tools/ensure-packages.sh (Debian package redis-server)"
            )
        self._spawn(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.work_dir),
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--protected-mode",
                "yes",
            ]
        )
        self._await(self._ping, timeout, "redis to answer PING")
        LOG.info("redis ready on 127.0.0.1:%d", self.port)
