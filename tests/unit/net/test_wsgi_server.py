"""The API's cheroot server with a trivial application: on a Unix socket
(stale one replaced, regular file refused, mode applied, removed at stop)
and over HTTPS; what it logs; how the options combine."""

import http.client
import logging
import os
import pathlib
import socket
import ssl
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest
from oslo_config import cfg

from inspector import exceptions
from inspector.conf import default
from inspector.conf import ssl as ssl_opts
from inspector.net import tls
from inspector.net.wsgi_server import WSGIServer
from tests.unit.net.certs import Certs, make_certs


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    body = environ["wsgi.url_scheme"].encode()
    start_response("200 OK", [("Content-Length", str(len(body)))])
    return [body]


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("localhost", timeout=5)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(5)
        self.sock.connect(self.path)


def _get_unix(path: pathlib.Path) -> bytes:
    conn = _UnixConnection(str(path))
    try:
        conn.request("GET", "/")
        return conn.getresponse().read()
    finally:
        conn.close()


@pytest.fixture
def short_dir() -> Iterator[pathlib.Path]:
    # a Unix socket path must fit in 108 bytes; pytest's tmp_path may not
    with tempfile.TemporaryDirectory(prefix="sock-") as name:
        yield pathlib.Path(name)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _conf(**values: Any) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    default.register_opts(conf)
    ssl_opts.register_opts(conf)
    conf([])
    for name, value in values.items():
        group, _, key = name.rpartition("__")
        conf.set_override(key, value, group=group or None)
    return conf


def test_unix_socket_mode_served_and_removed(
    short_dir: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = short_dir / "api.sock"
    caplog.set_level(logging.INFO, logger="inspector.net.wsgi_server")
    server = WSGIServer(app, "::", 5050, 2, unix_socket=str(path), socket_mode=0o660)
    old_umask = os.umask(0o077)  # the mode asked for wins over the umask
    try:
        server.start()
    finally:
        os.umask(old_umask)
    try:
        info = path.stat()
        assert stat.S_ISSOCK(info.st_mode)
        assert stat.S_IMODE(info.st_mode) == 0o660
        assert _get_unix(path) == b"http"
        assert f"API listening on http on Unix socket {path} (mode 0660)" in (
            caplog.messages
        )
    finally:
        server.stop()
    assert not os.path.lexists(path)


def test_unix_socket_without_mode_follows_the_umask(short_dir: pathlib.Path) -> None:
    path = short_dir / "api.sock"
    server = WSGIServer(app, "::", 5050, 2, unix_socket=str(path))
    old_umask = os.umask(0o027)
    try:
        server.start()
    finally:
        os.umask(old_umask)
    try:
        assert stat.S_IMODE(path.stat().st_mode) == 0o750
    finally:
        server.stop()


def test_stale_socket_replaced(short_dir: pathlib.Path) -> None:
    path = short_dir / "api.sock"
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()  # as a crash leaves it: the file, nobody listening
    server = WSGIServer(app, "::", 5050, 2, unix_socket=str(path), socket_mode=0o600)
    server.start()
    try:
        assert _get_unix(path) == b"http"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    finally:
        server.stop()


def test_regular_file_refused_and_kept(short_dir: pathlib.Path) -> None:
    path = short_dir / "api.sock"
    path.write_text("not a socket")
    server = WSGIServer(app, "::", 5050, 2, unix_socket=str(path))
    with pytest.raises(exceptions.ConfigError, match=r"^\[DEFAULT\]listen_unix_socket"):
        server.start()
    assert path.read_text() == "not a socket"


def test_https(certs: Certs, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="inspector.net.wsgi_server")
    port = _free_port()
    settings = tls.ServerTLS(
        tls.build_context(str(certs.server.cert), str(certs.server.key)),
        str(certs.server.cert),
        str(certs.server.key),
    )
    server = WSGIServer(app, "127.0.0.1", port, 2, https=settings)
    server.start()
    try:
        assert f"API listening on https://127.0.0.1:{port}" in caplog.messages
        client = ssl.create_default_context(cafile=str(certs.ca.cert))
        conn = http.client.HTTPSConnection("localhost", port, context=client, timeout=5)
        conn.request("GET", "/")
        assert conn.getresponse().read() == b"https"
        conn.close()
        # plain HTTP on the same port never reaches the application
        plain = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        try:
            plain.request("GET", "/")
            response = plain.getresponse()
            assert response.status == 400
            assert response.read() != b"http"
        except (ConnectionError, http.client.RemoteDisconnected):
            pass
        finally:
            plain.close()
    finally:
        server.stop()


def test_from_conf(certs: Certs) -> None:
    server = WSGIServer.from_conf(
        app,
        _conf(
            listen_address="127.0.0.1",
            listen_port=6000,
            api_threads=3,
            use_ssl=True,
            ssl__cert_file=str(certs.server.cert),
            ssl__key_file=str(certs.server.key),
        ),
    )
    assert server.where() == "https://127.0.0.1:6000"
    server = WSGIServer.from_conf(app, _conf(), host="::1", port=6001)
    assert server.where() == "http://[::1]:6001"
    server = WSGIServer.from_conf(
        app, _conf(listen_unix_socket="/run/i.sock", listen_unix_socket_mode=0o660)
    )
    assert server.where() == "http on Unix socket /run/i.sock (mode 0660)"


def test_from_conf_refuses_use_ssl_without_key(certs: Certs) -> None:
    conf = _conf(use_ssl=True, ssl__cert_file=str(certs.server.cert))
    with pytest.raises(exceptions.ConfigError, match=r"\[ssl\]key_file is not set"):
        WSGIServer.from_conf(app, conf)


def test_from_conf_refuses_host_with_a_socket() -> None:
    conf = _conf(listen_unix_socket="/run/i.sock")
    with pytest.raises(exceptions.ConfigError, match=r"^\[DEFAULT\]listen_unix_socket"):
        WSGIServer.from_conf(app, conf, host="127.0.0.1", port=5050)
