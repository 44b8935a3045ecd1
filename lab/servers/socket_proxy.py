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
import tempfile

from lab.servers import httpd, loopback
from lab.servers.httpd import RUN_AS
from lab.servers.process import ServerProcess, kill_group

PROXY_MODULES = {
    "proxy_module": "mod_proxy.so",
    "proxy_http_module": "mod_proxy_http.so",
}

PROXY = """\
Listen 127.0.0.1:{port}
<VirtualHost 127.0.0.1:{port}>
    ProxyPreserveHost On
    ProxyPass "/" "unix:{socket}|http://localhost/"
    ProxyPassReverse "/" "http://localhost/"
</VirtualHost>
"""


def installed() -> str | None:
    """None when Apache and mod_proxy_http are there, else what is missing."""
    return httpd.missing(list(PROXY_MODULES.values()), "apache2")


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


class SocketProxy(ServerProcess):
    """Apache on 127.0.0.1:``port`` passing everything to ``socket_path``;
    its files in a private directory :meth:`stop` removes."""

    name = "The proxy"

    def __init__(self, socket_path: str | os.PathLike[str], port: int | None = None):
        work_dir = pathlib.Path(tempfile.mkdtemp(prefix="inspector-proxy-"))
        os.chmod(work_dir, 0o755)
        super().__init__(work_dir, "apache-error.log", port, "apache.stdout")
        self.socket_path = str(socket_path)
        self.as_root = os.geteuid() == 0
        self.httpd_conf = self.work_dir / "httpd.conf"

    def _config(self) -> str:
        return httpd.config_head(
            self.work_dir, PROXY_MODULES, self.as_root
        ) + PROXY.format(port=self.port, socket=self.socket_path)

    def start(self, timeout: float = 30) -> None:
        missing = installed()
        if missing:
            raise RuntimeError(missing)
        self.httpd_conf.write_text(self._config())
        if self.as_root:
            shutil.chown(self.work_dir, RUN_AS, RUN_AS)
        self._spawn(
            httpd.command(self.httpd_conf),
            env=httpd.environment(),
            session=True,  # the process group is Apache's own
        )
        # any answer will do: a 503 while nothing listens on the socket
        self._await(
            lambda: loopback.answers_http(self.url + "/"),
            timeout,
            f"the proxy to answer on {self.url}",
        )

    def stop(self, timeout: float = 15) -> int | None:
        proc = self._proc
        code = super().stop(timeout)
        if proc is not None:  # Apache's children die with it; any straggler:
            kill_group(proc)
        shutil.rmtree(self.work_dir, ignore_errors=True)
        return code
