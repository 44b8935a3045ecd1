"""A private Redis on loopback (Debian ``redis-server``): the other tooz
backend the conductor service-group tests run on."""

import logging
import pathlib
import shutil
import socket
import subprocess
import time

from lab.servers import loopback

LOG = logging.getLogger(__name__)


class RedisServer:
    """One redis-server with its own directory and port, no persistence."""

    def __init__(self, work_dir: pathlib.Path, port: int | None = None) -> None:
        self.work_dir = pathlib.Path(work_dir)
        self.port = port or loopback.free_port()
        self.log_file = self.work_dir / "redis.log"
        self._proc: subprocess.Popen[bytes] | None = None

    def tooz_url(self, **options: object) -> str:
        query = "&".join(f"{k}={v}" for k, v in options.items())
        return f"redis://127.0.0.1:{self.port}" + (f"?{query}" if query else "")

    def _ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def start(self, timeout: float = 30.0) -> None:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not pathlib.Path(binary).exists():
            raise RuntimeError(
                "redis-server is not installed: run "
                "tools/ensure-packages.sh (Debian package redis-server)"
            )
        self.work_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.log_file, "ab")  # noqa: SIM115 - kept for the child
        self._proc = subprocess.Popen(
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
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                tail = loopback.tail(self.log_file)
                raise RuntimeError(f"redis exited early: {tail}")
            if self._ping():
                LOG.info("redis ready on 127.0.0.1:%d", self.port)
                return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"redis did not answer: {loopback.tail(self.log_file)}")

    def stop(self) -> None:
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        loopback.terminate(proc)
