"""The inspector's processes for the lab and tests: the standalone
``ironic-inspector``, and the split shape's API, conductors and PXE filter
agents."""

import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import time

from lab import waiting
from lab.servers import loopback

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


def _wait_for_listener(
    address: str | tuple[str, int],
    timeout: float,
    log_file: pathlib.Path,
    alive: "subprocess.Popen[bytes]",
) -> None:
    """Poll until a Unix socket path or a TCP address accepts connections."""
    family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive.poll() is None:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.settimeout(2)
            try:
                probe.connect(address)
            except OSError:
                time.sleep(0.1)
                continue
            return
    if alive.poll() is not None:
        raise RuntimeError(f"exited with {alive.returncode}; see {log_file}")
    raise TimeoutError(f"{address} accepted no connection; see {log_file}")


class InspectorServer:
    """One ``ironic-inspector`` process with its own config and database."""

    def __init__(
        self,
        work_dir: pathlib.Path,
        ironic_url: str,
        port: int | None = None,
        database_url: str | None = None,
        options: dict[str, dict[str, str]] | None = None,
    ) -> None:
        self.work_dir = pathlib.Path(work_dir)
        self.ironic_url = ironic_url
        self.port = port or loopback.free_port()
        self.database_url = (
            database_url or f"sqlite:///{self.work_dir / 'inspector.sqlite'}"
        )
        self.options = options or {}
        self.config_file = self.work_dir / "inspector.conf"
        self.log_file = self.work_dir / "inspector.log"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The API's URL; https:// when the options set ``use_ssl``."""
        return f"{self.scheme}://127.0.0.1:{self.port}"

    @property
    def scheme(self) -> str:
        use_ssl = self.options.get("DEFAULT", {}).get("use_ssl", "False")
        return "https" if use_ssl.lower() == "true" else "http"

    @property
    def unix_socket(self) -> str | None:
        """``listen_unix_socket`` from the options: the API listens there."""
        return self.options.get("DEFAULT", {}).get("listen_unix_socket") or None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def exited(self) -> bool:
        """Whether the process was started and has ended by itself."""
        return self._proc is not None and self._proc.poll() is not None

    def _config(self) -> str:
        groups: dict[str, dict[str, str]] = {
            "DEFAULT": {
                "standalone": "True",
                "listen_address": "127.0.0.1",
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

    program = "ironic-inspector"
    """The console script this class runs."""

    def _command(self) -> list[str]:
        return [_executable(self.program), "--config-file", str(self.config_file)]

    def _popen(self) -> "subprocess.Popen[bytes]":
        output = open(self.work_dir / "inspector.stdout", "ab")  # noqa: SIM115
        try:
            return subprocess.Popen(
                self._command(), stdout=output, stderr=subprocess.STDOUT
            )
        finally:
            output.close()

    def _wait_ready(self, timeout: float) -> None:
        assert self._proc is not None
        if self.unix_socket or self.scheme == "https":
            # no plain HTTP GET reaches a socket or a TLS port (whose client
            # may need a certificate): wait until the server accepts
            _wait_for_listener(
                self.unix_socket or ("127.0.0.1", self.port),
                timeout,
                self.log_file,
                self._proc,
            )
            return
        loopback.wait_for_http(self.url + "/", timeout, self.log_file, self._proc)

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
        self._proc = self._popen()
        try:
            self._wait_ready(timeout)
        except (TimeoutError, RuntimeError) as exc:
            self.stop()
            raise RuntimeError(
                f"{self.program} did not start: {exc}\n{self.log_tail()}"
            ) from exc

    def log_tail(self, chars: int = 3000) -> str:
        parts = []
        for path in (self.log_file, self.work_dir / "inspector.stdout"):
            try:
                parts.append(path.read_text(errors="replace")[-chars:])
            except OSError:
                pass
        return "\n".join(parts)

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
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        return proc.returncode

    def __enter__(self) -> "InspectorServer":
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

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
            "127.0.0.1",
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

    def _wait_ready(self, timeout: float) -> None:
        assert self._proc is not None
        marker = f"{self.program} {self.host} started"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"exited with {self._proc.returncode}")
            if marker in self.log_tail(200000):
                return
            time.sleep(0.05)
        raise TimeoutError(f"no {marker!r} in {self.log_file} within {timeout:.0f} s")


class PxeAgentServer(ConductorServer):
    """One ``ironic-inspector-pxe-filter`` (the filter of one DHCP host);
    ready once it logged its start, as a conductor."""

    program = "ironic-inspector-pxe-filter"
