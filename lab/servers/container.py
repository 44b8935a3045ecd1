"""The standalone service in its container image, run by podman on the
host's network, with its configuration and data directory mounted from the
work directory; its log is the container's output."""

import os
import pathlib
import subprocess
import uuid

from lab.checkout import ROOT
from lab.servers.inspector import InspectorServer

CONFIG = "/etc/ironic-inspector/inspector.conf"
"""Where the images read their configuration (mounted read-only)."""

DATA = "/var/lib/ironic-inspector"
"""The images' data directory: the SQLite file, owned by :data:`UID`."""

UID = 42461
"""The images' ironic-inspector user (Kolla's)."""

RUNTIME = "/usr/sbin/runc"
"""crun, podman's default runtime, cannot start a container on a host with
cgroups in hybrid mode; runc can."""

CONTAINERS_CONF = ROOT / "containers" / "containers.conf"


def podman_command(*args: str) -> list[str]:
    """``podman ARGS`` with runc."""
    return ["podman", "--runtime", RUNTIME, *args]


def podman_env() -> dict[str, str]:
    """The environment podman runs in: the checkout's ``containers.conf``
    (cgroupfs, podman's default ulimits left out) unless CONTAINERS_CONF
    names another."""
    env = dict(os.environ)
    env.setdefault("CONTAINERS_CONF", str(CONTAINERS_CONF))
    return env


class ContainerServer(InspectorServer):
    """``image`` (the standalone one) run attached by ``podman run``: stopped
    by ``podman stop``, whose SIGTERM the service drains on.

    ``data_options``: the data volume's mount options (``ro`` for a
    read-only one).
    """

    def __init__(
        self,
        work_dir: pathlib.Path,
        ironic_url: str,
        image: str,
        options: dict[str, dict[str, str]] | None = None,
        data_options: str = "rw",
    ) -> None:
        mine = {"DEFAULT": {"log_file": ""}}  # to stdout: the container's log
        for group, values in (options or {}).items():
            mine.setdefault(group, {}).update(values)
        super().__init__(
            work_dir,
            ironic_url,
            database_url=f"sqlite:///{DATA}/inspector.sqlite",
            options=mine,
        )
        self.name = "The inspector's container"
        self.image = image
        self.env = podman_env()
        self.data_options = data_options
        self.container = f"inspector-lab-{uuid.uuid4().hex[:12]}"
        self.data_dir = self.work_dir / "data"
        self.log_file = self.output_file = self.work_dir / "container.log"

    def command(self) -> list[str]:
        """``podman run`` of the image, attached (see :meth:`prepare`)."""
        return podman_command(
            "run", "--rm", "--name", self.container, "--network", "host",
            "--volume", f"{self.config_file}:{CONFIG}:ro",
            "--volume", f"{self.data_dir}:{DATA}:{self.data_options}",
            "--env", f"INSPECTOR_HEALTHCHECK_URL={self.url}/healthcheck",
            self.image,
        )  # fmt: skip

    _command = command

    def prepare(self) -> None:
        """Writes the configuration and makes the data directory the
        image's user owns: what :meth:`command` mounts."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(self._config())
        self.data_dir.mkdir(parents=True, exist_ok=True)
        os.chown(self.data_dir, UID, UID)

    def _launch(self) -> None:
        self.prepare()
        self._spawn(self.command(), env=self.env)

    def podman(
        self, *args: str, timeout: float = 60
    ) -> "subprocess.CompletedProcess[str]":
        """``podman ARGS`` in this server's environment, output captured."""
        return subprocess.run(
            podman_command(*args),
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def stop(self, timeout: float = 30) -> int | None:
        """``podman stop`` (SIGTERM, SIGKILL after ``timeout``); the
        container's exit code, which ``podman run`` returns."""
        if self._proc is None:
            return None
        if self._proc.poll() is None:
            self.podman("stop", "--time", str(int(timeout)), self.container,
                        timeout=timeout + 30)  # fmt: skip
        try:
            self._proc.wait(30)
        finally:
            self.podman("rm", "--force", "--ignore", self.container)
        return super().stop()
