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
import signal
import subprocess
import sys
import sysconfig
import tempfile

from lab import checkout
from lab.servers import loopback
from lab.servers.inspector import ApiServer

MODULES = pathlib.Path("/usr/lib/apache2/modules")
RUN_AS = "www-data"
DAEMON_NAME = "ironic-inspector-api"
"""The WSGIDaemonProcess group of the shipped vhost."""
SYSTEM_PYTHON = "/usr/bin/python3"
"""The interpreter Debian's mod_wsgi embeds."""

HTTPD_CONF = """\
# Written by the ironic-inspector lab: a self-contained Apache config around
# the project's own vhost (etc/apache2/ironic-inspector-api.conf).
ServerRoot {server_root}
ServerName 127.0.0.1
PidFile {run_dir}/httpd.pid
DefaultRuntimeDir {run_dir}
Mutex file:{run_dir}
LoadModule mpm_event_module {modules}/mod_mpm_event.so
LoadModule authz_core_module {modules}/mod_authz_core.so
LoadModule env_module {modules}/mod_env.so
LoadModule wsgi_module {modules}/mod_wsgi.so
{user}
ErrorLog {run_dir}/apache-error.log
LogLevel warn
MaxKeepAliveRequests 0
WSGISocketPrefix {run_dir}/wsgi
"""

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
    if not shutil.which("apache2") and not pathlib.Path("/usr/sbin/apache2").exists():
        return "apache2 is not installed (Debian package apache2)"
    if not (MODULES / "mod_wsgi.so").exists():
        return "mod_wsgi is not installed (Debian package libapache2-mod-wsgi-py3)"
    return None


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
        head = HTTPD_CONF.format(
            server_root=self.work_dir,
            run_dir=self.work_dir,
            modules=MODULES,
            user=f"User {RUN_AS}\nGroup {RUN_AS}" if self.as_root else "",
        )
        vhost = render_vhost(
            (SHIPPED / "ironic-inspector-api.conf").read_text(),
            port=self.port,
            processes=self.processes,
            threads=self.threads,
            python_home=sys.prefix if in_venv else sys.base_prefix,
            run_dir=self.work_dir,
        )
        return head + vhost

    def _command(self) -> list[str]:
        return ["apache2", "-f", str(self.httpd_conf), "-DFOREGROUND"]

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

    def _popen(self) -> "subprocess.Popen[bytes]":
        for path in self.work_dir.iterdir():
            path.chmod(0o644)  # whatever the umask: www-data reads them
        output = open(self.work_dir / "inspector.stdout", "ab")  # noqa: SIM115
        try:
            return subprocess.Popen(
                self._command(),
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # the process group is Apache's own
                # the daemon processes inherit Apache's environment, as they
                # would /etc/apache2/envvars'
                env={
                    **os.environ,
                    "LANG": "C.UTF-8",
                    "IRONIC_INSPECTOR_CONFIG": self.config_env or str(self.config_file),
                },
            )
        finally:
            output.close()

    def _wait_ready(self, timeout: float) -> None:
        assert self._proc is not None
        # the first request builds the service in a daemon process
        loopback.wait_for_http(self.url + "/", timeout, self.error_log, self._proc)

    def log_tail(self, chars: int = 3000) -> str:
        parts = [super().log_tail(chars)]
        parts.append(loopback.tail(self.error_log, chars))
        parts.append(loopback.tail(self.vhost_error_log, chars))
        return "\n".join(parts)

    def daemon_pids(self) -> list[int]:
        """PIDs of the mod_wsgi daemon processes serving the API."""
        from lab import procstat

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
        if proc is not None:
            # Apache's children die with it; reap any straggler of its group
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self.as_root:
            shutil.rmtree(self.work_dir, ignore_errors=True)
        if proc is not None:  # the daemon processes' shared metrics
            from inspector import wsgi

            shared = pathlib.Path(tempfile.gettempdir()) / (
                f"{wsgi.METRICS_DIR_PREFIX}{proc.pid}"
            )
            shutil.rmtree(shared, ignore_errors=True)
        return code
