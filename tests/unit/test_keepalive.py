"""The kept-alive HTTP/1.1 connection against a server scripted byte by byte."""

import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from inspector import keepalive
from lab.waiting import wait_until

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
    "/bad-length": (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", True),
    "/silent": (b"", True),
    "/length-then-gone": (
        b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(JSON), JSON),
        True,
    ),
}


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
                answer, close = ANSWERS[head.split(b" ")[1].decode()]
                conn.sendall(answer)
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
def pool(server: Scripted) -> Iterator[keepalive.Pool]:
    made = keepalive.Pool(f"http://127.0.0.1:{server.port}/v1", timeout=5)
    yield made
    made.close()


def _get(pool: keepalive.Pool, path: str, **kwargs: Any) -> keepalive.Answer:
    return pool.exchange(
        kwargs.pop("method", "GET"), path, kwargs.pop("body", None), kwargs
    )


@pytest.mark.parametrize("path", ["/length", "/chunks", "/http-1.0-kept"])
def test_framed_answers_keep_their_connection(
    server: Scripted, pool: keepalive.Pool, path: str
) -> None:
    first = _get(pool, path)
    second = _get(pool, path)
    assert first.status_code == second.status_code
    assert first.content == second.content != b""
    assert server.connections == 1
    if path != "/http-1.0-kept":
        assert first.json() == {"ok": True}


def test_a_chunked_answer_is_put_together(pool: keepalive.Pool) -> None:
    answer = _get(pool, "/chunks")
    assert (answer.status_code, answer.reason) == (201, "Created")
    assert answer.content == JSON


@pytest.mark.parametrize("path", ["/to-the-close", "/http-1.0"])
def test_answers_that_end_the_connection_are_not_kept(
    server: Scripted, pool: keepalive.Pool, path: str
) -> None:
    assert _get(pool, path).content in (JSON, b"{}")
    assert _get(pool, "/length").content == JSON
    assert server.connections == 2


def test_an_answer_without_a_body_leaves_the_connection_usable(
    server: Scripted, pool: keepalive.Pool
) -> None:
    answer = _get(pool, "/no-content")
    assert (answer.status_code, answer.content) == (204, b"")
    assert _get(pool, "/length").content == JSON
    assert server.connections == 1


def test_an_interim_answer_is_skipped(pool: keepalive.Pool) -> None:
    answer = _get(pool, "/continue")
    assert (answer.status_code, answer.content) == (200, b"{}")


@pytest.mark.parametrize(
    "path", ["/garbage", "/long-header", "/short", "/bad-length", "/silent"]
)
def test_what_is_no_http_answer_is_unreachable(
    server: Scripted, pool: keepalive.Pool, path: str
) -> None:
    with pytest.raises(keepalive.Unreachable, match=f"127.0.0.1:{server.port}"):
        _get(pool, path)
    assert _get(pool, "/length").content == JSON  # a new connection works


def test_the_request_as_written(server: Scripted, pool: keepalive.Pool) -> None:
    _get(pool, "/length", method="POST", **{"X-Auth-Token": "t"})
    _get(pool, "/length", method="PUT", body=b'{"a": 1}', **{"Accept": "a/b"})
    _get(pool, "/length", **{"Host": "ironic.example", "Accept-Encoding": "gzip"})
    (_, post, post_body), (_, put, put_body), (_, get, _) = server.requests
    assert post.startswith(b"POST /length HTTP/1.1\r\n")
    assert f"\r\nHost: 127.0.0.1:{server.port}\r\n".encode() in post
    assert b"\r\nX-Auth-Token: t\r\n" in post
    assert b"\r\nContent-Length: 0\r\n" in post and post_body == b""
    assert b"\r\nContent-Length: 8\r\n" in put and put_body == b'{"a": 1}'
    assert b"\r\nAccept-Encoding: identity\r\n" in put
    assert b"Content-Length" not in get
    assert get.count(b"Host:") == 1 and b"\r\nHost: ironic.example\r\n" in get
    assert get.count(b"Accept-Encoding:") == 1


@pytest.mark.parametrize(
    ("target", "headers"),
    [
        ("/length HTTP/1.1\r\nX-Injected: 1", {}),
        ("/with space", {}),
        ("/length", {"X-Token": "a\r\nX-Injected: 1"}),
        ("/length", {"Bad Name": "1"}),
    ],
)
def test_what_would_break_the_request_is_refused_unsent(
    server: Scripted, pool: keepalive.Pool, target: str, headers: dict[str, str]
) -> None:
    with pytest.raises(ValueError):
        pool.exchange("GET", target, None, headers)
    assert server.requests == []


def test_a_connection_the_server_closed_while_idle_is_replaced(
    server: Scripted, pool: keepalive.Pool
) -> None:
    # the server closes after a kept-alive answer, as on its idle timeout
    assert _get(pool, "/length-then-gone").content == JSON
    assert len(pool._idle) == 1
    wait_until(lambda: server.closed, 5, "the server to close the connection")
    assert _get(pool, "/length").content == JSON
    assert server.connections == 2
    assert [number for number, _, _ in server.requests] == [1, 2]


def test_nobody_listening_is_unreachable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(keepalive.Unreachable, match="ConnectionRefusedError"):
        keepalive.Pool(f"http://127.0.0.1:{port}", timeout=5).exchange(
            "GET", "/", None, {}
        )


def test_no_answer_in_time_is_a_timeout(server: Scripted) -> None:
    slow = keepalive.Pool(f"http://127.0.0.1:{server.port}", timeout=0.2)
    ANSWERS["/never"] = (b"", False)
    try:
        with pytest.raises(keepalive.Unreachable) as raised:
            slow.exchange("GET", "/never", None, {})
    finally:
        del ANSWERS["/never"]
    assert raised.value.timed_out
