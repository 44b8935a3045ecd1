"""Kept-alive HTTP connections to one server, shared by threads: urllib3's
connection pool with our policy.

The Ironic client and the etcd client send many small requests to one
server each. Through requests (and keystoneauth) every request pays for
hooks, cookies, adapters and sessions; here it goes straight to urllib3's
pool for that server (the wire protocol, framing and connection checks are
urllib3's and ``http.client``'s). What is ours: the TLS settings taken from
a requests-style ``verify``/``cert``, a proxy from the environment as
requests would pick it, one timeout for connecting and for each read, one
more try on a new connection when a kept-alive connection turns out to be
closed, and every failure to get an answer raised as :class:`Unreachable`.
"""

import json
import os
import ssl
import threading
import urllib.parse
import urllib.request
from typing import Any

import urllib3
from urllib3 import connection as urllib3_connection
from urllib3 import exceptions as urllib3_exceptions

IDLE_KEPT = 64
"""Idle connections kept per server (more are opened when as many threads
send at once, and closed when given back to a full pool)."""


class Unreachable(ConnectionError):
    """The request did not get an answer; ``timed_out`` tells a timeout."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


class Reply:
    """A server's whole answer (with the names requests uses)."""

    def __init__(self, status: int, reason: str, content: bytes) -> None:
        self.status_code = status
        self.reason = reason
        self.content = content

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.content)


def proxy_for(url: str) -> str | None:
    """The proxy from the environment that requests would use for ``url``
    (``<scheme>_proxy``, ``all_proxy``, minus ``no_proxy``), or None."""
    parts = urllib.parse.urlsplit(url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


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


_sent = threading.local()
"""Whether the request this thread sent last went on a connection that had
carried an answer before (set by the connection classes below)."""


class _Counted:
    """Mixed into urllib3's connection classes: counts the requests sent
    since the connection was last closed, so that a request that failed on
    a kept-alive connection can be told from one on a new connection."""

    sock: Any
    _requests = 0

    def close(self) -> None:
        self._requests = 0
        super().close()  # type: ignore[misc]

    def request(self, *args: Any, **kwargs: Any) -> None:
        _sent.reused = self.sock is not None and self._requests > 0
        self._requests += 1
        super().request(*args, **kwargs)  # type: ignore[misc]


class _HTTPConnection(_Counted, urllib3_connection.HTTPConnection):
    pass


class _HTTPSConnection(_Counted, urllib3_connection.HTTPSConnection):
    pass


_ANSWER_CUT = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)
"""What a kept-alive connection the server closed gives (``http.client``'s
RemoteDisconnected is a ConnectionResetError)."""


class Pool:
    """Connections to ``base_url``'s server, through the proxy the
    environment names for it. Thread-safe."""

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
        self._origin = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
        options: dict[str, Any] = {
            "timeout": urllib3.Timeout(connect=timeout, read=timeout),
            "maxsize": IDLE_KEPT,
            "retries": False,  # one more try is ours (exchange), no redirects
        }
        if self.scheme == "https":
            options["ssl_context"] = tls or ssl.create_default_context()
        self.proxy = proxy_for(base_url)
        self._manager: urllib3.ProxyManager | None = None
        self._pool: urllib3.HTTPConnectionPool
        if self.proxy is None:
            cls = (
                urllib3.HTTPSConnectionPool
                if self.scheme == "https"
                else urllib3.HTTPConnectionPool
            )
            self._pool = cls(self.host, self.port, **options)
        else:
            credentials = urllib.parse.urlsplit(self.proxy)
            headers = None
            if credentials.username:
                auth = urllib.parse.unquote(credentials.username)
                auth += ":" + urllib.parse.unquote(credentials.password or "")
                headers = urllib3.make_headers(proxy_basic_auth=auth)
            self._manager = urllib3.ProxyManager(
                self.proxy, num_pools=1, proxy_headers=headers, **options
            )
            self._pool = self._manager.connection_from_host(
                self.host, self.port, self.scheme
            )
        self._pool.ConnectionCls = (
            _HTTPSConnection if self.scheme == "https" else _HTTPConnection
        )

    def close(self) -> None:
        self._pool.close()
        if self._manager is not None:
            self._manager.clear()

    def exchange(
        self,
        method: str,
        target: str,
        body: bytes | None,
        headers: dict[str, str],
    ) -> Reply:
        """One request (``target``: the path and query) and its whole answer.

        urllib3 drops a kept-alive connection the server closed while idle
        before using it; one it closed just as the request went out fails
        before the request reaches the server: that one is tried again at
        once on a new connection.

        :raises Unreachable: no answer (refused, reset, timed out, TLS, not
            an HTTP answer).
        :raises ValueError: a header that cannot be sent.
        """
        try:
            try:
                return self._send(method, target, body, headers)
            except urllib3_exceptions.ProtocolError as exc:
                if not (getattr(_sent, "reused", False) and _cut_short(exc)):
                    raise
            return self._send(method, target, body, headers)
        except (urllib3_exceptions.HTTPError, OSError) as exc:
            cause = _cause(exc)
            raise Unreachable(
                f"{self.scheme}://{self.host}:{self.port}: "
                f"{type(cause).__name__}: {cause}",
                timed_out=isinstance(cause, TimeoutError)
                or isinstance(exc, urllib3_exceptions.ReadTimeoutError),
            ) from exc

    def _send(
        self, method: str, target: str, body: bytes | None, headers: dict[str, str]
    ) -> Reply:
        _sent.reused = False
        if self._manager is not None:  # the proxy wants the whole URL
            reply = self._manager.urlopen(
                method, self._origin + target, body=body, headers=headers
            )
        else:
            reply = self._pool.urlopen(
                method, target, body=body, headers=headers, assert_same_host=False
            )
        return Reply(reply.status, reply.reason or "", reply.data)


def _cut_short(exc: BaseException) -> bool:
    """Whether ``exc`` says the server closed the connection unanswered."""
    return any(isinstance(arg, _ANSWER_CUT) for arg in exc.args)


def _cause(exc: BaseException) -> BaseException:
    """What urllib3 wrapped: the socket's, TLS's or ``http.client``'s error."""
    for _ in range(5):
        reason = getattr(exc, "reason", None)
        inner = reason if isinstance(reason, BaseException) else None
        inner = inner or next(
            (arg for arg in exc.args if isinstance(arg, BaseException)), None
        )
        inner = inner or exc.__cause__
        if inner is None or not isinstance(exc, urllib3_exceptions.HTTPError):
            break
        exc = inner
    return exc
