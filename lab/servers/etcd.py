"""A private etcd on loopback (Debian ``etcd-server``), for split-mode tests."""

import logging
import os
import pathlib
import shutil
import subprocess
import tempfile
import time
import weakref

import requests

from lab.servers import loopback

LOG = logging.getLogger(__name__)

RAM = pathlib.Path("/dev/shm")
"""A RAM-backed filesystem, where an fsync costs nothing."""


class EtcdServer:
    """One etcd member with its own data directory, client and peer ports.

    ``in_memory`` keeps the data directory on a RAM-backed filesystem
    (:data:`RAM`, when there is one), as the lab's PostgreSQL runs with
    ``fsync=off``: every write to etcd waits for its write-ahead log's
    fsync, and with several test processes writing one virtual disk those
    took up to 0.9 s, long enough for a 3 s membership lease to run out.
    It survives :meth:`stop` and :meth:`start` (an etcd restart keeps its
    data, as on a disk) and is removed by :meth:`close`, or when the
    process ends.
    """

    def __init__(
        self, work_dir: pathlib.Path, port: int | None = None, in_memory: bool = False
    ) -> None:
        self.work_dir = pathlib.Path(work_dir)
        self.port = port or loopback.free_port()
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
        self.log_file = self.work_dir / "etcd.log"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def client_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def tooz_url(self, **options: object) -> str:
        """``etcd3+http://`` URL for tooz, with driver options as the query."""
        query = "&".join(f"{k}={v}" for k, v in options.items())
        return f"etcd3+http://127.0.0.1:{self.port}" + (f"?{query}" if query else "")

    def start(self, timeout: float = 30.0) -> None:
        binary = shutil.which("etcd")
        if not binary:
            raise RuntimeError(
                "etcd is not installed: run tools/ensure-packages.sh (Debian "
                "package etcd-server)"
            )
        self.work_dir.mkdir(parents=True, exist_ok=True)
        peer = f"http://127.0.0.1:{self.peer_port}"
        log = open(self.log_file, "ab")  # noqa: SIM115 - kept for the child
        self._proc = subprocess.Popen(
            [
                binary,
                "--name",
                "lab",
                "--data-dir",
                str(self.data_dir),
                "--listen-client-urls",
                self.client_url,
                "--advertise-client-urls",
                self.client_url,
                "--listen-peer-urls",
                peer,
                "--initial-advertise-peer-urls",
                peer,
                "--initial-cluster",
                f"lab={peer}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        started = time.monotonic()
        deadline = started + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"etcd exited early: {self._tail()}")
            try:
                health = requests.get(f"{self.client_url}/health", timeout=1).json()
                if str(health.get("health")) == "true":
                    LOG.info(
                        "etcd ready on %s in %.1f s",
                        self.client_url,
                        time.monotonic() - started,
                    )
                    return
            except (requests.RequestException, ValueError):
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"etcd did not become healthy: {self._tail()}")

    def _tail(self) -> str:
        return loopback.tail(self.log_file)

    def stop(self) -> None:
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        loopback.terminate(proc)

    def close(self) -> None:
        """Stop, and remove a data directory kept in memory."""
        self.stop()
        if self._removal is not None:
            self._removal()
