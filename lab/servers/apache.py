"""The split-mode API under a real Apache + mod_wsgi, on loopback.

Debian's ``apache2`` and ``libapache2-mod-wsgi-py3`` serve
``inspector.wsgi:application`` from this project's virtualenv
(``python-home``) in mod_wsgi daemon mode: several processes with several
threads each. Apache runs from a self-contained config file in a private
directory and never touches /etc/apache2. As root, Apache's children and the
daemon processes run as ``www-data``, so that user must be able to read the
virtualenv and the project; the start-up checks this and says what to fix.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from lab import checkout, procstat
from lab.servers import httpd, loopback
from lab.servers.httpd import RUN_AS
from lab.servers.inspector import ApiServer
from lab.servers.process import kill_group

DAEMON_NAME = "ironic-inspector-api"
"""The WSGIDaemonProcess group of the shipped vhost."""
SYSTEM_PYTHON = "/usr/bin/python3"
"""The interpreter Debian's mod_wsgi embeds."""

WSGI_MODULES = {"env_module": "mod_env.so", "wsgi_module": "mod_wsgi.so"}

SHIPPED = checkout.ROOT / "etc" / "apache2"
"""The vhost and WSGI script the project ships, used here as they are."""


def render_vhost(
    text: str,
    port: int,
    processes: int,
    threads: int,
    python_home: str,
    run_dir: pathlib.Path,
) -> str:
    """The shipped vhost with the lab's port, paths and sizes.

    Every value it replaces must be there: a vhost edited out of shape
    fails here instead of silently serving something else.
    """
    replacements = [
        ("Listen 5050", f"Listen 127.0.0.1:{port}"),
        ("<VirtualHost *:5050>", f"<VirtualHost 127.0.0.1:{port}>"),
        ("processes=4 threads=8", f"processes={processes} threads={threads}"),
        # the daemon runs as Apache's own user (www-data when run as root)
        (" user=ironic-inspector group=ironic-inspector", ""),
        ("python-home=/opt/ironic-inspector", f"python-home={python_home}"),
        ("/usr/local/share/ironic-inspector", str(run_dir)),
        ("${APACHE_LOG_DIR}", str(run_dir)),
    ]
    for old, new in replacements:
        if old not in text:
            raise RuntimeError(f"The shipped vhost no longer contains {old!r}")
        text = text.replace(old, new)
    return text


def installed() -> str | None:
    """None when Apache and mod_wsgi are there, else what is missing."""
    return httpd.missing(list(WSGI_MODULES.values()), "libapache2-mod-wsgi-py3")


class ApacheApiServer(ApiServer):
    """``inspector.wsgi:application`` under Apache in mod_wsgi daemon mode.

    Its files live in a private directory (as root one that ``www-data`` can
    read, like the PostgreSQL server's) which :meth:`stop` removes.
    """

    program = "apache2"

    def __init__(
        self,
        work_dir: pathlib.Path,
        ironic_url: str,
        port: int | None = None,
        database_url: str | None = None,
        options: dict[str, dict[str, str]] | None = None,
        processes: int = 2,
        threads: int = 8,
    ) -> None:
        self.as_root = os.geteuid() == 0
        if self.as_root:
            # the daemon processes run as www-data, which cannot enter root's
            # private temporary directories: give them a directory of their own
            work_dir = pathlib.Path(tempfile.mkdtemp(prefix="inspector-apache-"))
            os.chmod(work_dir, 0o755)
        super().__init__(work_dir, ironic_url, port, database_url, options)
        self.processes = processes
        self.threads = threads
        self.error_log = self.work_dir / "apache-error.log"
        self.httpd_conf = self.work_dir / "httpd.conf"
        self.vhost_error_log = self.work_dir / "ironic-inspector-api-error.log"
        self.config_env: str | None = None
        """IRONIC_INSPECTOR_CONFIG for Apache; the written config by default."""

    @property
    def scheme(self) -> str:
        # the lab's Apache listens in plain HTTP; the inspector's use_ssl and
        # listen_unix_socket do not apply under it
        return "http"

    def _check_readable(self) -> None:
        """www-data must import the project from this virtualenv."""
        if not self.as_root:
            return
        # mod_wsgi embeds Debian's Python and adds the venv's site-packages
        purelib = sysconfig.get_paths()["purelib"]
        code = f"import site; site.addsitedir({purelib!r}); import inspector.wsgi"
        probe = subprocess.run(
            ["runuser", "-u", RUN_AS, "--", SYSTEM_PYTHON, "-c", code],
            capture_output=True,
            text=True,
            cwd="/",
        )
        if probe.returncode != 0:
            raise RuntimeError(
                f"Apache's daemon processes run as {RUN_AS}, which cannot import "
                f"the inspector from {sys.prefix}: {probe.stderr.strip()[-400:]}\n"
                f"Put the checkout and its virtualenv where {RUN_AS} can read "
                "them (every parent directory needs o+x), or use the API's "
                "local server (ironic-inspector-api-wsgi)."
            )

    def _httpd_conf(self) -> str:
        in_venv = sys.prefix != sys.base_prefix
        head = httpd.config_head(self.work_dir, WSGI_MODULES, self.as_root)
        head += f"MaxKeepAliveRequests 0\nWSGISocketPrefix {self.work_dir}/wsgi\n"
        vhost = render_vhost(
            (SHIPPED / "ironic-inspector-api.conf").read_text(),
            port=self.port,
            processes=self.processes,
            threads=self.threads,
            python_home=sys.prefix if in_venv else sys.base_prefix,
            run_dir=self.work_dir,
        )
        return head + vhost

    def start(self, timeout: float = 60, dbsync: bool = True) -> None:
        missing = installed()
        if missing:
            raise RuntimeError(missing)
        self._check_readable()
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self._take_files()
        self.httpd_conf.write_text(self._httpd_conf())
        shutil.copy(SHIPPED / "inspector-api.wsgi", self.work_dir)
        if self.as_root:
            # the daemon processes write the inspector's log here
            shutil.chown(self.work_dir, RUN_AS, RUN_AS)
        super().start(timeout, dbsync)

    def _take_files(self) -> None:
        """Files the options name (the JSON-RPC client's CA), copied into
        the work directory, which the daemon processes' user can read."""
        group = self.options.get("json_rpc", {})
        for name in ("cafile", "certfile", "keyfile"):
            source = group.get(name)
            if source and pathlib.Path(source).parent != self.work_dir:
                copy = self.work_dir / f"json-rpc-{name}.pem"
                shutil.copy(source, copy)
                group[name] = str(copy)

    def _launch(self) -> None:
        for path in self.work_dir.iterdir():
            path.chmod(0o644)  # whatever the umask: www-data reads them
        config = self.config_env or str(self.config_file)
        self._spawn(
            httpd.command(self.httpd_conf),
            env=httpd.environment(IRONIC_INSPECTOR_CONFIG=config),
            session=True,  # the process group is Apache's own
        )

    def _ready(self) -> bool:
        # the first request builds the service in a daemon process
        return loopback.answers_http(self.url + "/")

    def _ready_means(self) -> str:
        return f"Apache to serve the API on {self.url}"

    def log_tail(self, chars: int = 3000) -> str:
        parts = [super().log_tail(chars)]
        parts.append(loopback.tail(self.error_log, chars))
        parts.append(loopback.tail(self.vhost_error_log, chars))
        return "\n".join(parts)

    def daemon_pids(self) -> list[int]:
        """PIDs of the mod_wsgi daemon processes serving the API."""
        if self._proc is None:
            return []
        found = []
        for pid in procstat.tree(self._proc.pid)[1:]:
            try:
                name = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if name.startswith(b"(wsgi:"):  # display-name, cut to argv[0] length
                found.append(pid)
        return found

    def stop(self, timeout: float = 15) -> int | None:
        proc = self._proc
        code = super().stop(timeout)
        if proc is not None:  # Apache's children die with it; any straggler:
            kill_group(proc)
        if self.as_root:
            shutil.rmtree(self.work_dir, ignore_errors=True)
        if proc is not None:  # the daemon processes' shared metrics
            from inspector import wsgi

            shared = pathlib.Path(tempfile.gettempdir()) / (
                f"{wsgi.METRICS_DIR_PREFIX}{proc.pid}"
            )
            shutil.rmtree(shared, ignore_errors=True)
        return code
