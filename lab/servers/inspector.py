"""The inspector's processes for the lab and tests: the standalone
``ironic-inspector``, and the split shape's API, conductors and PXE filter
agents."""

import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

from lab import waiting
from lab.servers import loopback
from lab.servers.process import ServerProcess

RELOADED = "Configuration reloaded"
"""What the service logs when SIGHUP applied the changed options."""


def _executable(name: str) -> str:
    beside = pathlib.Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if not found:
        raise RuntimeError(f"{name} is not installed (pip install the project)")
    return found


class InspectorServer(ServerProcess):
    """One ``ironic-inspector`` process with its own config and database;
    its log is the service's own, its output ``inspector.stdout``."""

    program = "ironic-inspector"
    """The console script this class runs."""

    def __init__(
        self,
        work_dir: pathlib.Path,
        ironic_url: str,
        port: int | None = None,
        database_url: str | None = None,
        options: dict[str, dict[str, str]] | None = None,
        address: str = "127.0.0.1",
    ) -> None:
        """``address``: the loopback address it listens on (another than
        127.0.0.1 where a host name resolves to that one)."""
        super().__init__(work_dir, "inspector.log", port, "inspector.stdout")
        self.name = self.program
        self.address = address
        self.ironic_url = ironic_url
        self.database_url = (
            database_url or f"sqlite:///{self.work_dir / 'inspector.sqlite'}"
        )
        self.options = options or {}
        self.config_file = self.work_dir / "inspector.conf"

    @property
    def url(self) -> str:
        """The API's URL; https:// when the options set ``use_ssl``."""
        return f"{self.scheme}://{self.address}:{self.port}"

    @property
    def scheme(self) -> str:
        use_ssl = self.options.get("DEFAULT", {}).get("use_ssl", "False")
        return "https" if use_ssl.lower() == "true" else "http"

    @property
    def unix_socket(self) -> str | None:
        """``listen_unix_socket`` from the options: the API listens there."""
        return self.options.get("DEFAULT", {}).get("listen_unix_socket") or None

    def _config(self) -> str:
        groups: dict[str, dict[str, str]] = {
            "DEFAULT": {
                "standalone": "True",
                "listen_address": self.address,
                "listen_port": str(self.port),
                "introspection_delay": "0",
                "host": "lab-inspector",
                "log_file": str(self.log_file),
                "use_stderr": "False",
                # the lab has no Keystone; a deployment's default is keystone
                "auth_strategy": "noauth",
            },
            "pxe_filter": {"driver": "noop"},
            "healthcheck": {"enabled": "True"},
            "database": {"connection": self.database_url},
            "ironic": {
                "auth_type": "none",
                "endpoint_override": self.ironic_url,
                "retry_interval": "0.2",
                "max_retries": "30",
            },
            "processing": {"store_data": "database"},
        }
        for group, values in self.options.items():
            groups.setdefault(group, {}).update(values)
        lines = []
        for group, values in groups.items():
            lines.append(f"[{group}]")
            lines += [f"{k} = {v}" for k, v in values.items()]
        return "\n".join(lines) + "\n"

    def _command(self) -> list[str]:
        return [_executable(self.program), "--config-file", str(self.config_file)]

    def _launch(self) -> None:
        self._spawn(self._command())

    ready_interval = 0.1
    """Seconds between two looks at whether it is up."""

    def _ready(self) -> bool:
        """Whether it is up: its API answers (or accepts, see below)."""
        if self.unix_socket or self.scheme == "https":
            # no plain HTTP GET reaches a socket or a TLS port (whose client
            # may need a certificate): it is up once it accepts
            return loopback.accepts(self.unix_socket or (self.address, self.port))
        return loopback.answers_http(self.url + "/")

    def _ready_means(self) -> str:
        return f"{self.program} to answer on {self.url}"

    def start(self, timeout: float = 60, dbsync: bool = True) -> None:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(self._config())
        if dbsync and not self.database_url.startswith("sqlite"):
            subprocess.run(
                [
                    _executable("ironic-inspector-dbsync"),
                    "--config-file",
                    str(self.config_file),
                    "upgrade",
                ],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        self._launch()
        self._await(self._ready, timeout, self._ready_means(), self.ready_interval)

    def signal(self, signo: int) -> None:
        if self._proc is not None:
            os.kill(self._proc.pid, signo)

    def reload(self, options: dict[str, dict[str, str]]) -> None:
        """Change ``options`` in the running server's config file and send
        SIGHUP (mutable options apply); returns once it says so."""
        for group, values in options.items():
            self.options.setdefault(group, {}).update(values)
        done = self.log_file.read_text(errors="replace").count(RELOADED)
        self.config_file.write_text(self._config())
        self.signal(signal.SIGHUP)
        waiting.wait_until(
            lambda: self.log_file.read_text(errors="replace").count(RELOADED),
            30,
            "the configuration reloaded",
            until=lambda count: count > done,
        )

    def stop(self, timeout: float = 15) -> int | None:
        """SIGTERM, then SIGKILL after ``timeout``; returns the exit code."""
        return super().stop(timeout)

    def wait_exit(self, timeout: float) -> float:
        """Seconds the process took to exit after a stop signal sent elsewhere."""
        assert self._proc is not None
        started = time.monotonic()
        self._proc.wait(timeout)
        return time.monotonic() - started


class ApiServer(InspectorServer):
    """``ironic-inspector-api-wsgi`` on its local threaded server."""

    program = "ironic-inspector-api-wsgi"

    def _command(self) -> list[str]:
        return [
            *super()._command()[:1],
            "--host",
            self.address,
            "--port",
            str(self.port),
            "--",
            "--config-file",
            str(self.config_file),
        ]


class ConductorServer(InspectorServer):
    """One ``ironic-inspector-conductor``; ready once it joined the group."""

    program = "ironic-inspector-conductor"

    @property
    def host(self) -> str:
        return self.options["DEFAULT"]["host"]

    ready_interval = 0.05

    @property
    def _marker(self) -> str:
        return f"{self.program} {self.host} started"

    def _ready(self) -> bool:
        return self._marker in self.log_tail(200000)

    def _ready_means(self) -> str:
        return f"{self._marker!r} in {self.log_file}"


class PxeAgentServer(ConductorServer):
    """One ``ironic-inspector-pxe-filter`` (the filter of one DHCP host);
    ready once it logged its start, as a conductor."""

    program = "ironic-inspector-pxe-filter"
