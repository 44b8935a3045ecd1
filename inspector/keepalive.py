"""Kept-alive ``http.client`` connections to one server, shared by threads.

The Ironic client and the etcd client send many small requests to one
server each. Through requests (and keystoneauth) every request pays for
hooks, cookies, adapters and urllib3's pool: about 1 ms of CPU, against
0.2 ms for the request itself over a plain kept-alive connection. The
callers keep their libraries for what those do well (authentication,
endpoint discovery, answer handling) and send the bytes through here.
A proxy from the environment is not used here: :func:`applies` says so,
and callers keep their library for such a server.
"""

import http.client
import json
import os
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
        self.port = parts.port
        self.timeout = timeout
        self.tls = tls if parts.scheme == "https" else None
        if parts.scheme == "https" and self.tls is None:
            self.tls = ssl.create_default_context()
        self._idle: list[http.client.HTTPConnection] = []
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

        :raises Unreachable: no answer (refused, reset, timed out, TLS).
        """
        conn, reused = self._borrow()
        try:
            try:
                return self._send(conn, method, target, body, headers)
            except (ConnectionResetError, BrokenPipeError):
                # RemoteDisconnected is a ConnectionResetError
                conn.close()
                if not reused:
                    raise
            conn, reused = self._open(), False
            return self._send(conn, method, target, body, headers)
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise Unreachable(
                f"{self.scheme}://{self.host}:{self.port}: {type(exc).__name__}: {exc}",
                timed_out=isinstance(exc, TimeoutError),
            ) from exc

    def _open(self) -> http.client.HTTPConnection:
        if self.tls is not None:
            return http.client.HTTPSConnection(
                self.host, self.port, timeout=self.timeout, context=self.tls
            )
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)

    def _borrow(self) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return self._open(), False

    def _give_back(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if len(self._idle) < IDLE_KEPT:
                self._idle.append(conn)
                return
        conn.close()

    def _send(
        self,
        conn: http.client.HTTPConnection,
        method: str,
        target: str,
        body: bytes | None,
        headers: dict[str, str],
    ) -> Answer:
        conn.request(method, target, body=body, headers=headers)
        resp = conn.getresponse()
        content = resp.read()
        if resp.will_close:
            conn.close()
        else:
            self._give_back(conn)
        return Answer(resp.status, resp.reason, content)
