"""A private memcached on loopback (Debian ``memcached``): keystonemiddleware's
token cache in the keystone authentication tests."""

import logging
import os
import pathlib
import shutil
import socket
import urllib.parse

from lab.servers.process import ServerProcess

LOG = logging.getLogger(__name__)


class MemcachedServer(ServerProcess):
    """One memcached process on its own port, 64 MB, no UDP."""

    name = "memcached"

    def __init__(self, work_dir: pathlib.Path, port: int | None = None) -> None:
        super().__init__(work_dir, "memcached.log", port)

    @property
    def url(self) -> str:
        """``memcached://`` (tooz's form; pifpaf's too)."""
        return f"memcached://{self.address}"

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
        return self._command(b"version", ends=(b"\r\n",)).startswith(b"VERSION")

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
        command = [binary, "-l", "127.0.0.1", "-p", str(self.port), "-U", "0"]
        command += ["-m", "64", "-v"]
        if os.geteuid() == 0:  # memcached refuses root unless told whom to be
            command += ["-u", "root"]
        self._spawn(command)
        self._await(self._ping, timeout, "memcached to answer")
        LOG.info("memcached ready on %s", self.address)
