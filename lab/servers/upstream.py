"""Upstream ironic-inspector (PyPI, its last release) in the lab, for the
side-by-side benchmark (``make bench BENCH_UPSTREAM=1``).

It is installed once into its own virtualenv next to the lab's Ironic and
runs standalone (API and conductor in one process, SQLite), with the
options the lab gives our standalone process, so the two do the same job
against the same Ironic.
"""

import pathlib
import subprocess

from lab.servers.inspector import InspectorServer
from lab.venvs import default_cache_dir, install_venv

UPSTREAM_REQUIREMENT = "ironic-inspector==12.5.0"


def install(cache_dir: pathlib.Path | None = None) -> pathlib.Path:
    venv = (cache_dir or default_cache_dir()) / "upstream-inspector-venv"
    return install_venv(
        venv, UPSTREAM_REQUIREMENT, "upstream ironic-inspector", "about 2 minutes"
    )


class UpstreamServer(InspectorServer):
    """Upstream's standalone ``ironic-inspector`` with the lab's options."""

    def __init__(
        self, work_dir: pathlib.Path, ironic_url: str, venv: pathlib.Path
    ) -> None:
        super().__init__(work_dir, ironic_url)
        self.venv = venv

    def _config(self) -> str:
        return (
            "[DEFAULT]\n"
            "standalone = True\n"
            "transport_url = fake://\n"
            "auth_strategy = noauth\n"
            "listen_address = 127.0.0.1\n"
            f"listen_port = {self.port}\n"
            "introspection_delay = 0\n"
            f"log_file = {self.log_file}\n"
            "use_stderr = False\n"
            "[pxe_filter]\ndriver = noop\n"
            f"[database]\nconnection = {self.database_url}\n"
            "[ironic]\nauth_type = none\n"
            f"endpoint_override = {self.ironic_url}\n"
            "retry_interval = 1\nmax_retries = 30\n"
            "[processing]\nstore_data = database\n"
        )

    def _command(self) -> list[str]:
        program = str(self.venv / "bin" / "ironic-inspector")
        return [program, "--config-file", str(self.config_file)]

    def start(self, timeout: float = 120, dbsync: bool = True) -> None:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(self._config())
        subprocess.run(
            [
                str(self.venv / "bin" / "ironic-inspector-dbsync"),
                "--config-file",
                str(self.config_file),
                "upgrade",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        super().start(timeout, dbsync=False)
