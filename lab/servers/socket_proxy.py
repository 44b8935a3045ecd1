"""Apache as a reverse proxy to the API's Unix socket, as Bifrost's nginx.

The inspector listens on ``[DEFAULT]listen_unix_socket``; this front end
listens on a free loopback port and passes every request to that socket
with mod_proxy (``ProxyPass / "unix:/path|http://localhost/"``). Apache runs
from a self-contained config in a private directory and never touches
/etc/apache2. As root its children run as ``www-data``: the socket must be
reachable by that user, which :func:`socket_directory` arranges the way a
deployment would (a directory of the front end's group, setgid, so the
socket made in it belongs to that group and a mode of 0660 lets it in).
"""

import grp
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile

from lab.servers import loopback
from lab.servers.apache import MODULES, RUN_AS

PROXY_CONF = """\
# Written by the ironic-inspector lab: Apache proxying to a Unix socket.
ServerRoot {run_dir}
ServerName 127.0.0.1
PidFile {run_dir}/httpd.pid
DefaultRuntimeDir {run_dir}
Mutex file:{run_dir}
LoadModule mpm_event_module {modules}/mod_mpm_event.so
LoadModule authz_core_module {modules}/mod_authz_core.so
LoadModule proxy_module {modules}/mod_proxy.so
LoadModule proxy_http_module {modules}/mod_proxy_http.so
{user}
ErrorLog {run_dir}/apache-error.log
LogLevel warn
Listen 127.0.0.1:{port}
<VirtualHost 127.0.0.1:{port}>
    ProxyPreserveHost On
    ProxyPass "/" "unix:{socket}|http://localhost/"
    ProxyPassReverse "/" "http://localhost/"
</VirtualHost>
"""


def installed() -> str | None:
    """None when Apache and mod_proxy_http are there, else what is missing."""
    if not shutil.which("apache2") and not pathlib.Path("/usr/sbin/apache2").exists():
        return "apache2 is not installed (Debian package apache2)"
    for module in ("mod_proxy.so", "mod_proxy_http.so"):
        if not (MODULES / module).exists():
            return f"{module} is missing from {MODULES} (Debian package apache2)"
    return None


def socket_directory() -> pathlib.Path:
    """A new directory for the API's socket that the proxy can reach.

    Short (a socket path has at most 107 bytes), outside root's private
    temporary directories; as root, of ``www-data``'s group with the setgid
    bit so a socket created in it gets that group. The caller removes it.
    """
    path = pathlib.Path(tempfile.mkdtemp(prefix="inspector-sock-"))
    if os.geteuid() == 0:
        os.chown(path, 0, grp.getgrnam(RUN_AS).gr_gid)
        os.chmod(path, 0o2750)
    return path


class SocketProxy:
    """Apache on 127.0.0.1:``port`` passing everything to ``socket_path``."""

    def __init__(self, socket_path: str | os.PathLike[str], port: int | None = None):
        self.socket_path = str(socket_path)
        self.port = port or loopback.free_port()
        self.as_root = os.geteuid() == 0
        self.work_dir = pathlib.Path(tempfile.mkdtemp(prefix="inspector-proxy-"))
        os.chmod(self.work_dir, 0o755)
        self.httpd_conf = self.work_dir / "httpd.conf"
        self.error_log = self.work_dir / "apache-error.log"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _config(self) -> str:
        return PROXY_CONF.format(
            run_dir=self.work_dir,
            modules=MODULES,
            port=self.port,
            socket=self.socket_path,
            user=f"User {RUN_AS}\nGroup {RUN_AS}" if self.as_root else "",
        )

    def start(self, timeout: float = 30) -> None:
        missing = installed()
        if missing:
            raise RuntimeError(missing)
        self.httpd_conf.write_text(self._config())
        if self.as_root:
            shutil.chown(self.work_dir, RUN_AS, RUN_AS)
        output = open(self.work_dir / "apache.stdout", "ab")  # noqa: SIM115
        try:
            self._proc = subprocess.Popen(
                ["apache2", "-f", str(self.httpd_conf), "-DFOREGROUND"],
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # the process group is Apache's own
                env={**os.environ, "LANG": "C.UTF-8"},
            )
        finally:
            output.close()
        try:
            # any answer will do: a 503 while nothing listens on the socket
            loopback.wait_for_http(self.url + "/", timeout, self.error_log, self._proc)
        except TimeoutError as exc:
            self.stop()
            raise RuntimeError(f"the proxy did not start: {exc}") from exc

    def log_tail(self, chars: int = 3000) -> str:
        return "\n".join(
            loopback.tail(path, chars)
            for path in (self.error_log, self.work_dir / "apache.stdout")
        )

    def stop(self, timeout: float = 15) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            loopback.terminate(proc, timeout)
            try:  # Apache's children die with it; reap any straggler
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        shutil.rmtree(self.work_dir, ignore_errors=True)

    def __enter__(self) -> "SocketProxy":
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()
