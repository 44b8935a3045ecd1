"""Kept-alive HTTP connections to one server, shared by threads: the
standard library's ``http.client`` with our pooling and policy.

The Ironic client and the etcd client send many small requests to one
server each. Through requests (and keystoneauth) every request pays for
hooks, cookies, adapters and sessions, and through urllib3's pool for a
retry and timeout state and a response object of its own (about 175 us of
CPU per request more than ``http.client`` alone, measured by
``python -m lab bench-swaps``). Here a request is one
``HTTPConnection.request`` and ``getresponse`` on a kept-alive connection:
the wire protocol (framing, chunked bodies, interim answers, header
checks) is ``http.client``'s. What is ours: the idle connections kept per
server, the TLS settings taken from a requests-style ``verify``/``cert``,
a proxy from the environment as requests would pick it, one timeout for
connecting and for each read, a kept-alive connection the server closed
while idle never used, one more try on a new connection when a kept-alive
connection turns out closed as the request went out, and every failure to
get an answer raised as :class:`Unreachable`.
"""

import base64
import http.client
import json
import logging
import os
import re
import select
import ssl
import threading
import urllib.parse
import urllib.request
from typing import Any

LOG = logging.getLogger(__name__)

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


_ANSWER_CUT = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)
"""What a kept-alive connection the server closed gives (``http.client``'s
RemoteDisconnected is a ConnectionResetError)."""

_UNSAFE = re.compile(r"[^A-Za-z0-9\-._~!$&'()*+,;=:@/?%\[\]]")
"""What may not stand in a request target as it is (RFC 3986): sent
percent-escaped, so that no target can end the request line early."""


def _escaped(target: str) -> str:
    if _UNSAFE.search(target) is None:
        return target
    return _UNSAFE.sub(
        lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), target
    )


class _Connection:
    """One connection and whether it has carried an answer before."""

    def __init__(self, http: http.client.HTTPConnection) -> None:
        self.http = http
        self.used = False

    def dropped(self) -> bool:
        """Whether the server closed it while idle (or sent what nobody
        asked for): readable with no request out."""
        sock = self.http.sock
        if sock is None:
            return True
        try:
            readable, _, _ = select.select([sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)


class Pool:
    """Connections to ``base_url``'s server, through the proxy the
    environment names for it. Thread-safe; each connection is used by one
    thread at a time."""

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
        self._timeout = timeout
        self._tls = (
            (tls or ssl.create_default_context()) if self.scheme == "https" else None
        )
        if self._tls is not None and self._tls.verify_mode == ssl.CERT_NONE:
            # once per server, where urllib3 warned on every request
            LOG.warning(
                "The TLS certificate of %s is not verified (insecure): "
                "anyone on the path can read and change this traffic",
                self._origin,
            )
        self.proxy = proxy_for(base_url)
        self._proxy_headers: dict[str, str] = {}
        if self.proxy is not None:
            proxy = urllib.parse.urlsplit(self.proxy)
            self._proxy_host = proxy.hostname or ""
            self._proxy_port = proxy.port or 80
            if proxy.username:
                auth = urllib.parse.unquote(proxy.username)
                auth += ":" + urllib.parse.unquote(proxy.password or "")
                token = base64.b64encode(auth.encode()).decode()
                self._proxy_headers["Proxy-Authorization"] = f"Basic {token}"
        self._idle: list[_Connection] = []
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for each in idle:
            each.http.close()

    def _new(self) -> _Connection:
        made: http.client.HTTPConnection
        if self.proxy is None:
            if self._tls is not None:
                made = http.client.HTTPSConnection(
                    self.host, self.port, timeout=self._timeout, context=self._tls
                )
            else:
                made = http.client.HTTPConnection(
                    self.host, self.port, timeout=self._timeout
                )
        elif self._tls is not None:  # a tunnel through the proxy (CONNECT)
            made = http.client.HTTPSConnection(
                self._proxy_host,
                self._proxy_port,
                timeout=self._timeout,
                context=self._tls,
            )
            made.set_tunnel(self.host, self.port, headers=self._proxy_headers)
        else:  # the proxy is sent whole URLs
            made = http.client.HTTPConnection(
                self._proxy_host, self._proxy_port, timeout=self._timeout
            )
        return _Connection(made)

    def _take(self) -> _Connection:
        """An idle connection the server still holds open, or a new one."""
        while True:
            with self._lock:
                if not self._idle:
                    return self._new()
                each = self._idle.pop()
            if not each.dropped():
                return each
            each.http.close()

    def _give_back(self, each: _Connection) -> None:
        with self._lock:
            if len(self._idle) < IDLE_KEPT:
                self._idle.append(each)
                return
        each.http.close()

    def exchange(
        self,
        method: str,
        target: str,
        body: bytes | None,
        headers: dict[str, str],
    ) -> Reply:
        """One request (``target``: the path and query) and its whole answer.

        A kept-alive connection the server closed while idle is never used;
        one it closed just as the request went out fails before the request
        reaches the server: that one is tried again at once on a new
        connection.

        :raises Unreachable: no answer (refused, reset, timed out, TLS, not
            an HTTP answer).
        :raises ValueError: a header that cannot be sent.
        """
        target = _escaped(target)
        if self.proxy is not None and self._tls is None:
            target = self._origin + target
            headers = {**self._proxy_headers, **headers}
        try:
            each = self._take()
            try:
                return self._send(each, method, target, body, headers)
            except _ANSWER_CUT:
                if not each.used:
                    raise
            return self._send(self._new(), method, target, body, headers)
        except (http.client.HTTPException, OSError) as exc:
            raise Unreachable(
                f"{self.scheme}://{self.host}:{self.port}: {type(exc).__name__}: {exc}",
                timed_out=isinstance(exc, TimeoutError),
            ) from exc

    def _send(
        self,
        each: _Connection,
        method: str,
        target: str,
        body: bytes | None,
        headers: dict[str, str],
    ) -> Reply:
        try:
            each.http.request(method, target, body, headers)
            answer = each.http.getresponse()
            content = answer.read()
        except BaseException:
            each.http.close()
            raise
        if answer.will_close:
            each.http.close()
        else:
            each.used = True
            self._give_back(each)
        return Reply(answer.status, answer.reason or "", content)
