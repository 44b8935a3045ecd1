"""The kept-alive connection pool (``http.client``'s connections, our
policy) against a server scripted byte by byte: connections kept and replaced, what is not an
answer raised as Unreachable, one more try on a kept-alive connection cut
as the request went out, and proxies from the environment."""

import socket
import ssl
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from inspector import connection_pool
from lab.waiting import wait_until
from tests.unit.net.certs import Certs, make_certs

JSON = b'{"ok": true}'
ANSWERS: dict[str, tuple[bytes, bool]] = {
    "/length": (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(JSON), JSON),
        False,
    ),
    "/chunks": (
        b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
        b'5;name=value\r\n{"ok"\r\n7\r\n: true}\r\n0\r\nX-Trailer: 1\r\n\r\n',
        False,
    ),
    "/to-the-close": (
        b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + JSON,
        True,
    ),
    "/http-1.0": (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}", False),
    "/http-1.0-kept": (
        b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\n{}",
        False,
    ),
    "/no-content": (b"HTTP/1.1 204 No Content\r\nServer: x\r\n\r\n", False),
    "/continue": (
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
        False,
    ),
    "/garbage": (b"SSH-2.0-OpenSSH_9.2\r\n\r\n", True),
    "/long-header": (
        b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 70000 + b"\r\n\r\n",
        True,
    ),
    "/short": (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345", True),
    "/not-here": (b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", False),
    "/silent": (b"", True),
    "/length-then-gone": (
        b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(JSON), JSON),
        True,
    ),
    "/length-then-cut": (
        b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(JSON), JSON),
        False,
    ),
}
"""What the server answers for each path; True: it closes the connection
after. After ``/length-then-cut`` it reads the next request on that
connection and closes it unanswered (a server whose idle timeout ran out
just as the request went out)."""


class Scripted:
    """Answers each request with ANSWERS[path]; remembers what it got."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.requests: list[tuple[int, bytes, bytes]] = []
        self.connections = 0
        self.closed = 0
        """Connections it closed."""
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            number = self.connections
            threading.Thread(
                target=self._serve_then_count, args=(conn, number), daemon=True
            ).start()

    def _serve_then_count(self, conn: socket.socket, number: int) -> None:
        self._serve(conn, number)
        self.closed += 1

    def _serve(self, conn: socket.socket, number: int) -> None:
        reader = conn.makefile("rb")
        cut_next = False
        with conn, reader:
            while True:
                head = b""
                while not head.endswith(b"\r\n\r\n"):
                    line = reader.readline()
                    if not line:
                        return
                    head += line
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                self.requests.append((number, head, reader.read(length)))
                if cut_next:
                    return
                # a proxy is sent the whole URL
                path = "/" + head.split(b" ")[1].decode().split("/", 3)[-1]
                answer, close = ANSWERS.get(path, ANSWERS["/not-here"])
                conn.sendall(answer)
                cut_next = path == "/length-then-cut"
                if close:
                    return

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def server() -> Iterator[Scripted]:
    scripted = Scripted()
    yield scripted
    scripted.close()


@pytest.fixture
def pool(server: Scripted) -> Iterator[connection_pool.Pool]:
    made = connection_pool.Pool(f"http://127.0.0.1:{server.port}/v1", timeout=5)
    yield made
    made.close()


def _get(pool: connection_pool.Pool, path: str, **kwargs: Any) -> connection_pool.Reply:
    return pool.exchange(
        kwargs.pop("method", "GET"), path, kwargs.pop("body", None), kwargs
    )


@pytest.mark.parametrize("path", ["/length", "/chunks", "/http-1.0-kept"])
def test_framed_answers_keep_their_connection(
    server: Scripted, pool: connection_pool.Pool, path: str
) -> None:
    first = _get(pool, path)
    second = _get(pool, path)
    assert first.status_code == second.status_code
    assert first.content == second.content != b""
    assert server.connections == 1
    if path != "/http-1.0-kept":
        assert first.json() == {"ok": True}
    if path == "/chunks":
        assert (first.status_code, first.reason) == (201, "Created")


@pytest.mark.parametrize("path", ["/to-the-close", "/http-1.0"])
def test_answers_that_end_the_connection_are_not_kept(
    server: Scripted, pool: connection_pool.Pool, path: str
) -> None:
    assert _get(pool, path).content in (JSON, b"{}")
    assert _get(pool, "/length").content == JSON
    assert server.connections == 2


def test_an_answer_without_a_body_leaves_the_connection_usable(
    server: Scripted, pool: connection_pool.Pool
) -> None:
    answer = _get(pool, "/no-content")
    assert (answer.status_code, answer.content) == (204, b"")
    assert _get(pool, "/length").content == JSON
    assert server.connections == 1


def test_an_interim_answer_is_skipped(pool: connection_pool.Pool) -> None:
    answer = _get(pool, "/continue")
    assert (answer.status_code, answer.content) == (200, b"{}")


@pytest.mark.parametrize("path", ["/garbage", "/long-header", "/short", "/silent"])
def test_what_is_no_http_answer_is_unreachable(
    server: Scripted, pool: connection_pool.Pool, path: str
) -> None:
    with pytest.raises(connection_pool.Unreachable, match=f"127.0.0.1:{server.port}"):
        _get(pool, path)
    assert _get(pool, "/length").content == JSON  # a new connection works


def test_the_request_as_written(server: Scripted, pool: connection_pool.Pool) -> None:
    _get(pool, "/length", method="POST", **{"X-Auth-Token": "t"})
    _get(pool, "/length", method="PUT", body=b'{"a": 1}', **{"Accept": "a/b"})
    _get(pool, "/length", **{"Host": "ironic.example", "Accept-Encoding": "gzip"})
    (_, post, post_body), (_, put, put_body), (_, get, _) = server.requests
    assert post.startswith(b"POST /length HTTP/1.1\r\n")
    assert f"\r\nHost: 127.0.0.1:{server.port}\r\n".encode() in post
    assert b"\r\nX-Auth-Token: t\r\n" in post
    assert b"\r\nContent-Length: 0\r\n" in post and post_body == b""
    assert b"\r\nContent-Length: 8\r\n" in put and put_body == b'{"a": 1}'
    assert b"Content-Length" not in get
    assert get.count(b"Host:") == 1 and b"\r\nHost: ironic.example\r\n" in get
    assert get.count(b"Accept-Encoding:") == 1


def test_a_target_is_sent_escaped(server: Scripted, pool: connection_pool.Pool) -> None:
    answer = pool.exchange("GET", "/length HTTP/1.1\r\nX-Injected: 1", None, {})
    assert answer.status_code == 404
    ((_, head, _),) = server.requests
    assert head.startswith(b"GET /length%20HTTP/1.1%0D%0AX-Injected:%201 HTTP/1.1\r\n")
    assert b"\r\nX-Injected" not in head


def test_a_header_that_would_break_the_request_is_refused_unsent(
    server: Scripted, pool: connection_pool.Pool
) -> None:
    with pytest.raises(ValueError):
        pool.exchange("GET", "/length", None, {"X-Token": "a\r\nX-Injected: 1"})
    assert server.requests == []
    assert _get(pool, "/length").content == JSON


def test_a_connection_the_server_closed_while_idle_is_replaced(
    server: Scripted, pool: connection_pool.Pool
) -> None:
    # the server closes after a kept-alive answer, as on its idle timeout
    assert _get(pool, "/length-then-gone").content == JSON
    wait_until(lambda: server.closed, 5, "the server to close the connection")
    assert _get(pool, "/length").content == JSON
    assert server.connections == 2
    assert [number for number, _, _ in server.requests] == [1, 2]


def test_a_kept_alive_connection_cut_as_the_request_went_out_is_tried_again(
    server: Scripted, pool: connection_pool.Pool
) -> None:
    assert _get(pool, "/length-then-cut").content == JSON
    # the server reads the next request on that connection and closes it
    # unanswered: the request goes again, once, on a new connection
    assert _get(pool, "/length", method="POST").content == JSON
    assert [number for number, _, _ in server.requests] == [1, 1, 2]


def test_a_new_connection_cut_short_is_not_tried_again(
    server: Scripted, pool: connection_pool.Pool
) -> None:
    with pytest.raises(connection_pool.Unreachable, match="RemoteDisconnected"):
        _get(pool, "/silent", method="POST")
    assert len(server.requests) == 1


def test_a_proxy_from_the_environment_is_used(
    server: Scripted, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("http_proxy", f"http://user:p%40ss@127.0.0.1:{server.port}")
    monkeypatch.setenv("no_proxy", "ironic.direct")
    proxied = connection_pool.Pool("http://ironic.test:6385/v1", timeout=5)
    try:
        assert proxied.proxy is not None
        assert _get(proxied, "/length").content == JSON
        assert _get(proxied, "/length").content == JSON
    finally:
        proxied.close()
    (_, first, _), (_, second, _) = server.requests
    assert first.startswith(b"GET http://ironic.test:6385/length HTTP/1.1\r\n")
    assert b"\r\nproxy-authorization: basic dxnlcjpwqhnz\r\n" in first.lower()
    assert server.connections == 1  # kept alive to the proxy
    assert connection_pool.Pool("http://ironic.direct:6385", timeout=5).proxy is None


def test_nobody_listening_is_unreachable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(connection_pool.Unreachable, match="ConnectionRefusedError"):
        connection_pool.Pool(f"http://127.0.0.1:{port}", timeout=5).exchange(
            "GET", "/", None, {}
        )


def test_no_answer_in_time_is_a_timeout(server: Scripted) -> None:
    slow = connection_pool.Pool(f"http://127.0.0.1:{server.port}", timeout=0.2)
    ANSWERS["/never"] = (b"", False)
    try:
        with pytest.raises(connection_pool.Unreachable) as raised:
            slow.exchange("GET", "/never", None, {})
    finally:
        del ANSWERS["/never"]
    assert raised.value.timed_out


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


class ScriptedTls(Scripted):
    """The scripted server behind TLS (the server certificate of ``certs``);
    with ``tunnel``, a proxy first: it answers a CONNECT, then speaks TLS on
    that connection."""

    def __init__(self, certs: Certs, tunnel: bool = False) -> None:
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(certs.server.cert, certs.server.key)
        self.tunnel = tunnel
        self.connects: list[bytes] = []
        super().__init__()

    def _serve(self, conn: socket.socket, number: int) -> None:
        if self.tunnel:
            head = b""
            while not head.endswith(b"\r\n\r\n"):
                chunk = conn.recv(1)
                if not chunk:
                    return
                head += chunk
            self.connects.append(head)
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        try:
            wrapped = self.context.wrap_socket(conn, server_side=True)
        except (ssl.SSLError, OSError):
            conn.close()
            return
        super()._serve(wrapped, number)


def test_tls_verified_by_the_ca_given(certs: Certs) -> None:
    server = ScriptedTls(certs)
    tls = connection_pool.tls_context(str(certs.ca.cert), None)
    pool = connection_pool.Pool(f"https://localhost:{server.port}", timeout=5, tls=tls)
    try:
        assert _get(pool, "/length").content == JSON
        assert _get(pool, "/chunks").content == JSON
        assert server.connections == 1  # kept alive over TLS too
    finally:
        pool.close()
        server.close()


def test_tls_with_an_unknown_ca_is_unreachable(certs: Certs) -> None:
    server = ScriptedTls(certs)
    pool = connection_pool.Pool(
        f"https://localhost:{server.port}",
        timeout=5,
        tls=connection_pool.tls_context(True, None),
    )
    try:
        with pytest.raises(
            connection_pool.Unreachable, match="CERTIFICATE_VERIFY_FAILED"
        ):
            _get(pool, "/length")
        assert server.requests == []
    finally:
        pool.close()
        server.close()


def test_tls_through_a_proxy_is_tunnelled(
    certs: Certs, monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy = ScriptedTls(certs, tunnel=True)
    monkeypatch.setenv("https_proxy", f"http://user:pw@127.0.0.1:{proxy.port}")
    tls = connection_pool.tls_context(str(certs.ca.cert), None)
    pool = connection_pool.Pool("https://localhost:6385", timeout=5, tls=tls)
    try:
        assert pool.proxy is not None
        assert _get(pool, "/length").content == JSON
        assert _get(pool, "/length").content == JSON
    finally:
        pool.close()
        proxy.close()
    (connect,) = proxy.connects  # one tunnel, kept alive
    assert connect.startswith(b"CONNECT localhost:6385 HTTP/1.")
    assert b"\r\nProxy-Authorization: Basic dXNlcjpwdw==\r\n" in connect
    # the proxy's credentials never travel inside the tunnel
    assert all(b"Proxy-Authorization" not in head for _, head, _ in proxy.requests)
    assert all(head.startswith(b"GET /length ") for _, head, _ in proxy.requests)
