"""Kept-alive HTTP/1.1 connections to one server, shared by threads.

The Ironic client and the etcd client send many small requests to one
server each. Through requests (and keystoneauth) every request pays for
hooks, cookies, adapters and urllib3's pool: about 1 ms of CPU, against
0.15 ms over a kept-alive ``http.client`` connection, and 0.03 ms as
written here: a request is written in one piece and its answer read
through one buffer per connection, framed by its Content-Length or its
chunks (``http.client`` parses every answer's header block with the
``email`` package, most of its cost). The callers keep their libraries
for what those do well (authentication, endpoint discovery, answer
handling) and send the bytes through here. A proxy from the environment
is not used here: :func:`applies` says so, and callers keep their
library for such a server.
"""

import http.client
import json
import os
import re
import socket
import ssl
import threading
import urllib.parse
import urllib.request
from typing import Any

IDLE_KEPT = 16
"""Idle connections kept per server: one per busy worker thread is enough."""


class Unreachable(ConnectionError):
    """The request did not get an answer; ``timed_out`` tells a timeout."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


def applies(url: str) -> bool:
    """Whether ``url`` is reached directly (no proxy from the environment
    applies to it)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    proxies = urllib.request.getproxies()
    if not proxies.get(parts.scheme) and not proxies.get("all"):
        return True
    return bool(urllib.request.proxy_bypass(parts.hostname))


def tls_context(verify: Any, cert: Any) -> ssl.SSLContext:
    """requests' ``verify`` and ``cert`` settings as an SSL context, with the
    same certificate authorities requests would have used."""
    if verify is False:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        cafile: str | None
        if isinstance(verify, str):
            cafile = verify
        else:
            cafile = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get(
                "CURL_CA_BUNDLE"
            )
            if not cafile:
                from requests import certs

                cafile = certs.where()
        if cafile and os.path.isdir(cafile):
            context = ssl.create_default_context(capath=cafile)
        else:
            context = ssl.create_default_context(cafile=cafile)
    if cert:
        if isinstance(cert, (tuple, list)):
            context.load_cert_chain(cert[0], cert[1])
        else:
            context.load_cert_chain(cert)
    return context


MAX_LINE = 65536
"""Longest status, header or chunk-size line read (as ``http.client``)."""
MAX_HEADERS = 100
"""Most header lines in one answer (as ``http.client``)."""

_NOT_IN_TARGET = re.compile("[\x00-\x20\x7f]")
_NOT_IN_NAME = re.compile("[^!#$%&'*+.^_`|~0-9A-Za-z-]")
_NOT_IN_VALUE = re.compile("[\x00-\x08\x0a-\x1f\x7f]")
_WITH_BODY = ("PATCH", "POST", "PUT")
_END_OF_HEAD = (b"\r\n", b"\n", b"")


class Connection:
    """One HTTP/1.1 connection: requests written whole, answers read
    through one buffer, framed by Content-Length, chunks or the close.
    Not thread-safe (the pool lends it to one thread at a time)."""

    def __init__(
        self, host: str, port: int, timeout: float | None, tls: ssl.SSLContext | None
    ) -> None:
        sock = socket.create_connection((host, port), timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if tls is not None:
                sock = tls.wrap_socket(sock, server_hostname=host)
        except BaseException:
            sock.close()
            raise
        self._sock = sock
        self._reader = sock.makefile("rb")
        self.open = True
        """False once the server said it closes, or the answer ran to the end."""

    def close(self) -> None:
        self.open = False
        self._reader.close()
        self._sock.close()

    def request(
        self,
        method: str,
        target: str,
        body: bytes | None,
        headers: dict[str, str],
        host: str,
    ) -> None:
        """Write one request; ``host`` is the Host header's value.

        :raises ValueError: a target or header that would break the request
            (a space, a line break, a control character).
        """
        if _NOT_IN_TARGET.search(target):
            raise ValueError(f"Invalid request target {target!r}")
        lines = [f"{method} {target} HTTP/1.1"]
        given = {name.lower() for name in headers}
        if "host" not in given:
            lines.append(f"Host: {host}")
        if "accept-encoding" not in given:
            lines.append("Accept-Encoding: identity")
        for name, value in headers.items():
            if _NOT_IN_NAME.search(name) or _NOT_IN_VALUE.search(value):
                raise ValueError(f"Invalid header {name!r}: {value!r}")
            lines.append(f"{name}: {value}")
        if "content-length" not in given and (body is not None or method in _WITH_BODY):
            lines.append(f"Content-Length: {len(body or b'')}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        self._sock.sendall(head + body if body else head)

    def answer(self, method: str) -> "Answer":
        """Read the answer to the request written last (interim 1xx
        answers skipped).

        :raises http.client.HTTPException: not an HTTP answer, or cut short
            (``RemoteDisconnected``, a ConnectionResetError, when the server
            closed the connection before answering).
        """
        while True:
            version, status, reason = self._status_line()
            length, chunked, tokens = self._head()
            if not 100 <= status < 200:
                break
        if version == "HTTP/1.0":
            self.open = "keep-alive" in tokens
        else:
            self.open = "close" not in tokens
        if method == "HEAD" or status in (204, 304):
            content = b""
        elif chunked:
            content = self._chunks()
        elif length is not None:
            content = self._exactly(length)
        else:  # framed by the close
            content = self._reader.read()
            self.open = False
        return Answer(status, reason, content)

    def _line(self, what: str) -> bytes:
        line = self._reader.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise http.client.LineTooLong(what)
        return line

    def _status_line(self) -> tuple[str, int, str]:
        line = self._line("status line")
        if not line:
            raise http.client.RemoteDisconnected(
                "Remote end closed connection without response"
            )
        parts = line.decode("latin-1").rstrip("\r\n").split(None, 2)
        version, code = (parts + ["", ""])[:2]
        if not version.startswith("HTTP/1.") or len(code) != 3 or not code.isdigit():
            raise http.client.BadStatusLine(line.decode("latin-1", "replace"))
        return version, int(code), parts[2] if len(parts) > 2 else ""

    def _head(self) -> tuple[int | None, bool, set[str]]:
        """The header lines: (Content-Length, chunked, Connection tokens)."""
        length: int | None = None
        chunked = False
        tokens: set[str] = set()
        for _ in range(MAX_HEADERS + 1):
            line = self._line("header line")
            if line in _END_OF_HEAD:
                return length, chunked, tokens
            name, _, raw = line.partition(b":")
            key = name.strip().lower()
            if key == b"content-length":
                try:
                    length = int(raw.strip())
                except ValueError:
                    length = -1
                if length < 0:
                    raise http.client.HTTPException(
                        f"Invalid Content-Length {raw.strip()!r}"
                    )
            elif key == b"transfer-encoding":
                chunked = raw.strip().lower().endswith(b"chunked")
            elif key == b"connection":
                tokens |= {t.strip() for t in raw.decode("latin-1").lower().split(",")}
        raise http.client.HTTPException(f"got more than {MAX_HEADERS} headers")

    def _exactly(self, size: int) -> bytes:
        data = self._reader.read(size)
        if len(data) < size:
            raise http.client.IncompleteRead(data, size - len(data))
        return data

    def _chunks(self) -> bytes:
        parts: list[bytes] = []
        while True:
            line = self._line("chunk size")
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise http.client.IncompleteRead(b"".join(parts)) from None
            if size == 0:
                break
            parts.append(self._exactly(size))
            if self._line("chunk end") not in (b"\r\n", b"\n"):
                raise http.client.IncompleteRead(b"".join(parts))
        while self._line("trailer line") not in _END_OF_HEAD:
            pass
        return b"".join(parts)


class Answer:
    """An answer read whole (with the names requests uses)."""

    def __init__(self, status: int, reason: str, content: bytes) -> None:
        self.status_code = status
        self.reason = reason
        self.content = content

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.content)


class Pool:
    """Connections to ``base_url``'s server. Thread-safe: each request
    borrows an idle connection (or opens one) and gives it back when the
    answer has been read whole."""

    def __init__(
        self,
        base_url: str,
        timeout: float | None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        parts = urllib.parse.urlsplit(base_url)
        self.scheme = parts.scheme
        self.host = parts.hostname or ""
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.host_header = parts.netloc.rpartition("@")[2]
        """The Host header: the URL's host and port as written there."""
        self.timeout = timeout
        self.tls = tls if parts.scheme == "https" else None
        if parts.scheme == "https" and self.tls is None:
            self.tls = ssl.create_default_context()
        self._idle: list[Connection] = []
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def exchange(
        self,
        method: str,
        target: str,
        body: bytes | None,
        headers: dict[str, str],
    ) -> Answer:
        """One request and its whole answer.

        A kept-alive connection the server closed while idle fails before
        the request reaches the server: that one is tried again at once on a
        new connection.

        :raises Unreachable: no answer (refused, reset, timed out, TLS, not
            an HTTP answer).
        :raises ValueError: a target or header that cannot be sent.
        """
        conn: Connection | None = None
        try:
            conn, reused = self._borrow()
            try:
                return self._send(conn, method, target, body, headers)
            except (ConnectionResetError, BrokenPipeError):
                # RemoteDisconnected is a ConnectionResetError
                conn.close()
                if not reused:
                    raise
            conn = None
            conn = self._open()
            return self._send(conn, method, target, body, headers)
        except (OSError, http.client.HTTPException) as exc:
            if conn is not None:
                conn.close()
            raise Unreachable(
                f"{self.scheme}://{self.host}:{self.port}: {type(exc).__name__}: {exc}",
                timed_out=isinstance(exc, TimeoutError),
            ) from exc
        except ValueError:
            if conn is not None:
                conn.close()
            raise

    def _open(self) -> Connection:
        return Connection(self.host, self.port, self.timeout, self.tls)

    def _borrow(self) -> tuple[Connection, bool]:
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return self._open(), False

    def _give_back(self, conn: Connection) -> None:
        with self._lock:
            if len(self._idle) < IDLE_KEPT:
                self._idle.append(conn)
                return
        conn.close()

    def _send(
        self,
        conn: Connection,
        method: str,
        target: str,
        body: bytes | None,
        headers: dict[str, str],
    ) -> Answer:
        conn.request(method, target, body, headers, self.host_header)
        answer = conn.answer(method)
        if conn.open:
            self._give_back(conn)
        else:
            conn.close()
        return answer
