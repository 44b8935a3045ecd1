"""A private etcd on loopback (Debian ``etcd-server``), for split-mode tests."""

import logging
import os
import pathlib
import shutil
import tempfile
import time
import weakref

import requests

from lab.servers import loopback
from lab.servers.process import ServerProcess

LOG = logging.getLogger(__name__)

RAM = pathlib.Path("/dev/shm")
"""A RAM-backed filesystem, where an fsync costs nothing."""


class EtcdServer(ServerProcess):
    """One etcd member with its own data directory, client and peer ports;
    ``url`` is its client URL.

    ``in_memory`` keeps the data directory on a RAM-backed filesystem
    (:data:`RAM`, when there is one), as the lab's PostgreSQL runs with
    ``fsync=off``: every write to etcd waits for its write-ahead log's
    fsync, and with several test processes writing one virtual disk those
    took up to 0.9 s, long enough for a 3 s membership lease to run out.
    It survives :meth:`stop` and :meth:`start` (an etcd restart keeps its
    data, as on a disk) and is removed by :meth:`close`, or when the
    process ends.
    """

    name = "etcd"

    def __init__(
        self, work_dir: pathlib.Path, port: int | None = None, in_memory: bool = False
    ) -> None:
        super().__init__(work_dir, "etcd.log", port)
        self.peer_port = loopback.free_port()
        self.data_dir = self.work_dir / "etcd-data"
        self._removal: weakref.finalize | None = None
        if in_memory and RAM.is_dir() and os.access(RAM, os.W_OK):
            self.data_dir = pathlib.Path(
                tempfile.mkdtemp(prefix="inspector-lab-etcd-", dir=RAM)
            )
            self._removal = weakref.finalize(
                self, shutil.rmtree, self.data_dir, ignore_errors=True
            )

    def tooz_url(self, **options: object) -> str:
        """``etcd3+http://`` URL for tooz, with driver options as the query."""
        query = "&".join(f"{k}={v}" for k, v in options.items())
        return f"etcd3+http://127.0.0.1:{self.port}" + (f"?{query}" if query else "")

    def _healthy(self) -> bool:
        try:
            health = requests.get(f"{self.url}/health", timeout=1).json()
        except (requests.RequestException, ValueError):
            return False
        return str(health.get("health")) == "true"

    def start(self, timeout: float = 30.0) -> None:
        binary = shutil.which("etcd")
        if not binary:
            raise RuntimeError(
                "etcd is not installed: run tools/ensure-packages.sh (Debian "
                "package etcd-server)"
            )
        started = time.monotonic()
        peer = f"http://127.0.0.1:{self.peer_port}"
        self._spawn(
            [
                binary,
                "--name",
                "lab",
                "--data-dir",
                str(self.data_dir),
                "--listen-client-urls",
                self.url,
                "--advertise-client-urls",
                self.url,
                "--listen-peer-urls",
                peer,
                "--initial-advertise-peer-urls",
                peer,
                "--initial-cluster",
                f"lab={peer}",
            ]
        )
        self._await(self._healthy, timeout, "etcd to be healthy")
        LOG.info("etcd ready on %s in %.1f s", self.url, time.monotonic() - started)

    def close(self) -> None:
        """Stop, and remove a data directory kept in memory."""
        self.stop()
        if self._removal is not None:
            self._removal()
