"""A private PostgreSQL server on loopback, for tests and the split lab."""

import glob
import logging
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time

from lab import procstat
from lab.servers.process import ServerProcess

LOG = logging.getLogger(__name__)


def _bindir() -> pathlib.Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise RuntimeError(
            "PostgreSQL is not installed: run tools/ensure-packages.sh (Debian "
            "package postgresql)"
        )
    return pathlib.Path(found[-1]).parent


class PostgresServer(ServerProcess):
    """initdb + postgres in ``work_dir``, listening on 127.0.0.1 only;
    ``url`` is the SQLAlchemy URL of its database.

    As root the server runs as the ``postgres`` user (PostgreSQL refuses
    root); the data directory is private to this server and removed by
    :meth:`stop` unless ``keep`` is set.
    """

    name = "PostgreSQL"

    def __init__(
        self,
        work_dir: pathlib.Path,
        port: int | None = None,
        database: str = "inspector",
        keep: bool = False,
    ) -> None:
        if os.geteuid() == 0:
            # the server runs as "postgres", which cannot enter root's private
            # temporary directories: give it a directory of its own
            work_dir = pathlib.Path(tempfile.mkdtemp(prefix="inspector-pg-"))
            os.chmod(work_dir, 0o755)
        super().__init__(work_dir, "postgres.log", port)
        self.database = database
        self.keep = keep
        self.data_dir = self.work_dir / "pgdata"
        self._bindir = _bindir()
        self._timeout = 30.0

    @property
    def url(self) -> str:
        return (
            f"postgresql+psycopg2://inspector:inspector@127.0.0.1:{self.port}/"
            f"{self.database}"
        )

    def _as_owner(self, args: list[str]) -> list[str]:
        if os.geteuid() == 0:
            return ["runuser", "-u", "postgres", "--", *args]
        return args

    def start(self, timeout: float = 30.0) -> None:
        """A new cluster, the server, the ``inspector`` role and database;
        ``timeout`` for the server to accept connections (each time)."""
        self._timeout = timeout
        self.work_dir.mkdir(parents=True, exist_ok=True)
        if self.data_dir.exists():
            shutil.rmtree(self.data_dir)
        self.data_dir.mkdir(mode=0o700)
        if os.geteuid() == 0:
            shutil.chown(self.data_dir, "postgres", "postgres")
            shutil.chown(self.work_dir, "postgres", "postgres")
        started = time.monotonic()
        subprocess.run(
            self._as_owner(
                [
                    str(self._bindir / "initdb"),
                    "-D",
                    str(self.data_dir),
                    "-U",
                    "postgres",
                    "-A",
                    "trust",
                    "--no-sync",
                    "-E",
                    "UTF8",
                ]
            ),
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self._launch()
        self._psql("CREATE ROLE inspector LOGIN PASSWORD 'inspector'")
        self._psql(f"CREATE DATABASE {self.database} OWNER inspector")
        # the service's user logs in with its password, as in a deployment
        # (a wrong one is refused); the lab's superuser stays trusted
        hba = self.data_dir / "pg_hba.conf"
        rules = hba.read_text()
        hba.write_text(
            "host all inspector 127.0.0.1/32 scram-sha-256\n"
            "host all inspector ::1/128 scram-sha-256\n" + rules
        )
        self._psql("SELECT pg_reload_conf()")
        LOG.info(
            "PostgreSQL ready on 127.0.0.1:%s in %.1f s",
            self.port,
            time.monotonic() - started,
        )

    def _launch(self) -> None:
        """The postmaster (as its owner when root: its PID is then
        ``runuser``'s, the postmaster its child), until it accepts."""
        self._spawn(
            self._as_owner(
                [
                    str(self._bindir / "postgres"),
                    "-D",
                    str(self.data_dir),
                    "-h",
                    "127.0.0.1",
                    "-p",
                    str(self.port),
                    "-k",
                    str(self.data_dir),
                    "-c",
                    "fsync=off",
                    "-c",
                    "synchronous_commit=off",
                    "-c",
                    "full_page_writes=off",
                ]
            )
        )
        self._await(self._accepts, self._timeout, "PostgreSQL to accept connections")

    def pause(self) -> None:
        """Stop the server (fast shutdown: clients are cut off), keeping its
        data, as in a database outage; :meth:`resume` brings it back."""
        if self._proc is not None and self._proc.poll() is None:
            # runuser does not pass SIGINT on: signal the postmaster itself
            for pid in procstat.children(self._proc.pid) or [self._proc.pid]:
                os.kill(pid, signal.SIGINT)
            self._proc.wait(30)
        self._proc = None

    def resume(self) -> None:
        self._launch()

    def _accepts(self) -> bool:
        ready = subprocess.run(
            [str(self._bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return ready.returncode == 0

    def _psql(self, sql: str, database: str = "postgres") -> None:
        subprocess.run(
            [
                str(self._bindir / "psql"),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "-d",
                database,
                "-v",
                "ON_ERROR_STOP=1",
                "-q",
                "-c",
                sql,
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )

    def recreate_database(self) -> None:
        """Drop and create the database: a clean schema for the next test."""
        self._psql(f"DROP DATABASE IF EXISTS {self.database} WITH (FORCE)")
        self._psql(f"CREATE DATABASE {self.database} OWNER inspector")

    def create_database(self, name: str) -> None:
        """Another empty database owned by ``inspector`` on this server."""
        self._psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        self._psql(f"CREATE DATABASE {name} OWNER inspector")

    def stop(self, timeout: float = 15) -> int | None:
        """A smart shutdown (SIGTERM), SIGKILL after ``timeout``; the data
        directory removed unless kept."""
        code = super().stop(timeout)
        if not self.keep:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            if os.geteuid() == 0:
                shutil.rmtree(self.work_dir, ignore_errors=True)
        return code
