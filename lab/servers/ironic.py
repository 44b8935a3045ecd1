"""Runs a real Ironic (PyPI ``ironic``, fake-hardware) on loopback: Ironic
39 by default, or Ironic 32.1, the last release that drives an inspector
through its ``inspector`` inspect interface."""

import contextlib
import dataclasses
import json
import logging
import os
import pathlib
import shutil
import signal
import subprocess
import time

from lab import procstat
from lab.servers import loopback
from lab.servers.process import ServerProcess
from lab.venvs import install_venv

LOG = logging.getLogger(__name__)

IRONIC_REQUIREMENT = "ironic==39.*"


@dataclasses.dataclass(frozen=True)
class Release:
    """One Ironic release the lab runs: what pip installs, into which
    virtualenv of the cache, and how its configuration differs from the
    lab's (:data:`INTERFACES` and the options written before the caller's)."""

    requirement: str
    venv_name: str
    interfaces: dict[str, str] = dataclasses.field(default_factory=dict)
    options: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)


RELEASES = {
    "39": Release(IRONIC_REQUIREMENT, "ironic-venv"),
    # the newest release with the inspector interface; it starts only with
    # oslo.service 4.3 (2025.2): 4.8 dropped the no_fork argument its
    # ``ironic`` command passes to the service launcher
    "32.1": Release(
        "ironic==32.1.0 oslo.service==4.3.0",
        "ironic-32.1-venv",
        interfaces={
            # inspector (ironic-inspector's API, i.e. ours) for every node
            # the lab enrolls; agent and redfish inspection are Ironic 39's
            "enabled_inspect_interfaces": "inspector,fake,no-inspect",
            "default_inspect_interface": "inspector",
        },
        options={
            # the status poll of an inspection (60 s by default)
            "inspector": {"status_check_period": "2"},
            # where the interface copies the processed data to
            "inventory": {"data_backend": "database"},
        },
    ),
}
"""The releases by the name :class:`IronicServer` takes; 39 by default."""

INTERFACES = {
    # redfish too: [redfish]engine = ironic runs Ironic's own redfish
    # inspection (tests/integration/test_redfish.py); fake stays every
    # interface's default for fake-hardware (the first one)
    "enabled_hardware_types": "fake-hardware,redfish",
    "enabled_bios_interfaces": "fake,no-bios",
    "enabled_boot_interfaces": "fake,pxe",
    "enabled_console_interfaces": "fake,no-console",
    "enabled_deploy_interfaces": "fake,direct",
    "enabled_firmware_interfaces": "fake,no-firmware",
    # agent: Ironic's own inspection, for the rules comparison (issue 34);
    # fake stays the default (the first one)
    "enabled_inspect_interfaces": "fake,no-inspect,agent,redfish",
    "enabled_management_interfaces": "fake,redfish",
    "enabled_network_interfaces": "noop",
    "enabled_power_interfaces": "fake,redfish",
    "enabled_raid_interfaces": "fake,no-raid",
    "enabled_rescue_interfaces": "fake,no-rescue",
    "enabled_storage_interfaces": "noop",
    "enabled_vendor_interfaces": "fake,no-vendor",
}


def _alive(pid: int) -> bool:
    """``pid`` runs (a zombie does not)."""
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1]
    except OSError:
        return False
    return state.split()[0] != "Z"


class IronicServer(ServerProcess):
    """One Ironic process (API + conductor, ``rpc_transport = none``), or
    with ``database_url`` Ironic as production runs it: ``ironic-api`` with
    ``api_workers`` worker processes and a separate ``ironic-conductor``
    over JSON-RPC, on that (PostgreSQL) database.
    """

    name = "Ironic"

    def __init__(
        self,
        cache_dir: pathlib.Path,
        work_dir: pathlib.Path,
        port: int | None = None,
        host: str = "127.0.0.1",
        database_url: str | None = None,
        api_workers: int = 2,
        extra_config: dict[str, dict[str, str]] | None = None,
        python_path: list[pathlib.Path] | None = None,
        release: str = "39",
    ) -> None:
        """``extra_config``: more options by section (written after the
        lab's, so they win); ``python_path``: directories put on Ironic's
        ``PYTHONPATH`` (a package installed there with ``pip --target``,
        its entry points found as if installed in Ironic's venv);
        ``release``: a name of :data:`RELEASES`, each installed into a
        virtualenv of its own."""
        super().__init__(work_dir, "ironic.log", port, "ironic.stdout")
        self.release = RELEASES[release]
        self.name = f"Ironic {release}"
        self.extra_config = extra_config or {}
        self.python_path = python_path or []
        self.cache_dir = pathlib.Path(cache_dir)
        self.host = host
        self.database_url = database_url
        self.api_workers = api_workers
        self.requirement = self.release.requirement
        self.venv = self.cache_dir / self.release.venv_name
        if database_url is not None:
            self.requirement += " psycopg2-binary"
            self.venv = self.cache_dir / self.release.venv_name.replace(
                "-venv", "-pg-venv"
            )
        self.config_file = self.work_dir / "ironic.conf"
        self.policy_file = self.work_dir / "policy.yaml"

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def install(self) -> pathlib.Path:
        """Install Ironic into its own venv once; later calls return at once."""
        return install_venv(
            self.venv, self.requirement, self.name, "30 s to a few minutes"
        )

    def _write_config(self) -> None:
        production = self.database_url is not None
        lines = [
            "[DEFAULT]",
            "auth_strategy = noauth",
            f"rpc_transport = {'json-rpc' if production else 'none'}",
            # the API reaches the conductor at its host name
            f"host = {'127.0.0.1' if production else 'lab-ironic'}",
            "debug = False",
            f"log_file = {self.log_file}",
            "use_stderr = False",
        ]
        interfaces = {**INTERFACES, **self.release.interfaces}
        lines += [f"{k} = {v}" for k, v in interfaces.items()]
        lines += [
            "default_network_interface = noop",
            "[api]",
            f"host_ip = {self.host}",
            f"port = {self.port}",
            f"api_workers = {self.api_workers if production else 1}",
            "[database]",
            "connection = "
            + (self.database_url or f"sqlite:///{self.work_dir / 'ironic.sqlite'}"),
            # a lab's database, thrown away after the run: no fsync per
            # commit (PostgreSQL runs with fsync=off in the lab too)
            "sqlite_synchronous = false",
            "[dhcp]",
            "dhcp_provider = none",
            "[conductor]",
            "automated_clean = false",
            "sync_power_state_interval = -1",
            "heartbeat_interval = 5",
            "periodic_max_workers = 2",
            # agent inspection with fake boot: nothing boots, the test posts
            # the ramdisk's data to /v1/continue_inspection itself
            "[inspector]",
            "require_managed_boot = false",
            "[oslo_policy]",
            "enforce_scope = false",
            "enforce_new_defaults = false",
            # set_policy() changes it while Ironic runs (oslo.policy
            # re-reads a changed file)
            f"policy_file = {self.policy_file}",
            "[json_rpc]",
            "auth_strategy = noauth",
            "host_ip = 127.0.0.1",
            f"port = {loopback.free_port()}",
        ]
        # oslo.config merges a section written twice; the later value wins
        for section, options in [
            *self.release.options.items(),
            *self.extra_config.items(),
        ]:
            lines.append(f"[{section}]")
            lines += [f"{key} = {value}" for key, value in options.items()]
        self.config_file.write_text("\n".join(lines) + "\n")

    def set_policy(self, rules: dict[str, str]) -> None:
        """Ironic's policy overrides (none by default), taken at its next
        request: e.g. ``{"show_password": "@"}`` unmasks BMC passwords."""
        self.policy_file.write_text(json.dumps(rules) + "\n")

    def start(self, timeout: float = 90.0) -> None:
        """Installed once, then up within ``timeout`` (and, as production
        runs it, its conductor's drivers registered within as much)."""
        self.install()
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.set_policy({})
        self._write_config()
        bindir = self.venv / "bin"
        started = time.monotonic()
        self._create_schema()
        config = str(self.config_file)
        if self.database_url is None:
            command = [str(bindir / "ironic"), "--config-file", config]
        else:
            # one parent, so the CPU of its tree is Ironic's whole CPU
            command = [
                "sh",
                "-c",
                f'"{bindir}/ironic-api" --config-file "{config}" & '
                f'"{bindir}/ironic-conductor" --config-file "{config}" & wait',
            ]
        env = None
        if self.python_path:
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(str(p) for p in self.python_path)
        self._spawn(command, env=env, session=True)
        self._await(
            lambda: loopback.answers_http(self.url + "/v1"),
            timeout,
            f"Ironic's API to answer on {self.url}",
        )
        if self.database_url is not None:
            self._await(
                self._conductor_registered,
                timeout,
                "Ironic's conductor to register its drivers",
                interval=0.5,
            )
        LOG.info("Ironic ready at %s in %.1f s", self.url, time.monotonic() - started)

    def _create_schema(self) -> None:
        """Ironic's tables, once per database.

        A restart (the SQLite file exists) needs nothing; a new SQLite
        database is a copy of the schema ``ironic-dbsync`` made once per
        Ironic virtualenv (it costs ~3 s of CPU and more of wall time per
        run, and the tests start several Ironic servers). PostgreSQL's
        database is made by ``ironic-dbsync`` every time.
        """
        sqlite = self.work_dir / "ironic.sqlite"
        template = self.venv / "schema.sqlite"
        if self.database_url is None:
            if sqlite.exists():
                return
            if template.exists():
                shutil.copyfile(template, sqlite)
                return
        sync = subprocess.run(
            [
                str(self.venv / "bin" / "ironic-dbsync"),
                "--config-file",
                str(self.config_file),
                "create_schema",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        if sync.returncode != 0 and "already" not in sync.stdout:
            raise RuntimeError(f"ironic-dbsync failed:\n{sync.stdout[-3000:]}")
        if self.database_url is None:
            # several test processes may get here at once: each writes its
            # own copy and renames it into place
            partial = template.with_name(f"{template.name}.{os.getpid()}")
            shutil.copyfile(sqlite, partial)
            partial.replace(template)

    def _conductor_registered(self) -> bool:
        """The API answers before the separate conductor has registered its
        drivers; nothing can be enrolled until it has."""
        import requests

        try:
            drivers = requests.get(self.url + "/v1/drivers", timeout=5).json()
            return any(d.get("name") == "fake-hardware" for d in drivers["drivers"])
        except (requests.RequestException, ValueError, KeyError):
            return False

    def stop(self, timeout: float = 10) -> int | None:
        """Every process of its tree: ironic-api and ironic-conductor make
        sessions of their own, so by PID, not only the group."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            tree = procstat.tree(proc.pid)
            for pid in tree:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and any(_alive(p) for p in tree):
                time.sleep(0.1)
            for pid in tree:
                with contextlib.suppress(ProcessLookupError):
                    if _alive(pid):
                        os.kill(pid, signal.SIGKILL)
        proc.wait()
        return proc.returncode
