"""A private memcached on loopback (Debian ``memcached``): keystonemiddleware's
token cache in the keystone authentication tests."""

import logging
import os
import pathlib
import shutil
import socket
import subprocess
import time
import urllib.parse

from lab.servers import loopback

LOG = logging.getLogger(__name__)


class MemcachedServer:
    """One memcached process on its own port, 64 MB, no UDP."""

    def __init__(self, work_dir: pathlib.Path, port: int | None = None) -> None:
        self.work_dir = pathlib.Path(work_dir)
        self.port = port or loopback.free_port()
        self.log_file = self.work_dir / "memcached.log"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        """``host:port``, as ``[keystone_authtoken]memcached_servers`` lists it."""
        return f"127.0.0.1:{self.port}"

    def _command(
        self, line: bytes, ends: tuple[bytes, ...] = (b"END\r\n", b"OK\r\n")
    ) -> bytes:
        """One text-protocol command; the answer up to its closing line."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
            sock.sendall(line + b"\r\n")
            answer = b""
            while not answer.endswith((*ends, b"ERROR\r\n")):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
            return answer

    def _ping(self) -> bool:
        try:
            answer = self._command(b"version", ends=(b"\r\n",))
            return answer.startswith(b"VERSION")
        except OSError:
            return False

    def keys(self) -> list[str]:
        """Every key stored now (``lru_crawler metadump all``)."""
        keys = []
        for line in self._command(b"lru_crawler metadump all").splitlines():
            for field in line.decode().split():
                if field.startswith("key="):
                    keys.append(urllib.parse.unquote(field[4:]))
        return keys

    def get(self, key: str) -> bytes | None:
        """The raw value stored under ``key``, as a client library wrote it."""
        answer = self._command(b"get " + key.encode())
        if not answer.startswith(b"VALUE "):
            return None
        header, _, rest = answer.partition(b"\r\n")
        length = int(header.split()[3])
        return rest[:length]

    def flush(self) -> None:
        self._command(b"flush_all")

    def start(self, timeout: float = 30.0) -> None:
        binary = shutil.which("memcached") or "/usr/bin/memcached"
        if not pathlib.Path(binary).exists():
            raise RuntimeError(
                "memcached is not installed: run tools/ensure-packages.sh "
                "(Debian package memcached)"
            )
        self.work_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.log_file, "ab")  # noqa: SIM115 - kept for the child
        command = [binary, "-l", "127.0.0.1", "-p", str(self.port), "-U", "0"]
        command += ["-m", "64", "-v"]
        if os.geteuid() == 0:  # memcached refuses root unless told whom to be
            command += ["-u", "root"]
        self._proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                tail = loopback.tail(self.log_file)
                raise RuntimeError(f"memcached exited early: {tail}")
            if self._ping():
                LOG.info("memcached ready on %s", self.address)
                return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"memcached did not answer: {loopback.tail(self.log_file)}")

    def stop(self) -> None:
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        loopback.terminate(proc)
