"""etcd3gw's requests over kept-alive connections (:mod:`inspector.connection_pool`).

etcd3gw sends every etcd call (a lock's lease and transaction, its
release, the membership heartbeat, a key read) as a JSON POST through a
requests session. Under load that machinery, not etcd, was most of a
conductor's CPU: a node lock is three requests, taken by the API for a
start and by the conductor for each step. This object stands in for the
session where etcd3gw uses it (``post`` and ``get`` with a URL, a body as
``json`` or ready encoded as ``data``, and a timeout) and sends those requests through
:class:`inspector.connection_pool.Pool`; anything else (a streamed watch) goes
to the original session. Failures are raised as requests' exceptions, so
etcd3gw and tooz report them exactly as before.
"""

import json
import urllib.parse
from typing import TYPE_CHECKING, Any

import requests

from inspector import connection_pool, version

if TYPE_CHECKING:
    from etcd3gw.client import Etcd3Client

HEADERS = {
    "Accept": "application/json",
    "User-Agent": f"ironic-inspector/{version.string()}",
}


class KeptAliveSession:
    """A requests session's ``post`` and ``get`` for one etcd endpoint."""

    def __init__(self, session: requests.Session, base_url: str, timeout: Any) -> None:
        self.fallback = session
        self.verify = session.verify
        self.cert = session.cert
        parts = urllib.parse.urlsplit(base_url)
        self._netloc = parts.netloc
        tls = None
        if parts.scheme == "https":
            tls = connection_pool.tls_context(session.verify, session.cert)
        self._pool = connection_pool.Pool(base_url, timeout, tls)

    def post(
        self, url: str, *, json: Any = None, timeout: Any = None, **kwargs: Any
    ) -> Any:
        data = kwargs.pop("data", None)
        if kwargs or not self._ours(url) or (data is not None and json is not None):
            if data is not None:
                kwargs["data"] = data
            return self.fallback.post(url, json=json, timeout=timeout, **kwargs)
        body: bytes | None
        if data is not None:  # etcd3gw sends transactions ready encoded
            body = data.encode() if isinstance(data, str) else bytes(data)
        else:
            body = None if json is None else _dumps(json)
        return self._send("POST", url, body)

    def get(self, url: str, *, timeout: Any = None, **kwargs: Any) -> Any:
        if kwargs or not self._ours(url):
            return self.fallback.get(url, timeout=timeout, **kwargs)
        return self._send("GET", url, None)

    def close(self) -> None:
        self._pool.close()
        self.fallback.close()

    def _ours(self, url: str) -> bool:
        return urllib.parse.urlsplit(url).netloc == self._netloc

    def _send(self, method: str, url: str, body: bytes | None) -> connection_pool.Reply:
        parts = urllib.parse.urlsplit(url)
        target = parts.path + ("?" + parts.query if parts.query else "")
        headers = dict(HEADERS)
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            answer = self._pool.exchange(method, target, body, headers)
        except connection_pool.Unreachable as exc:
            if exc.timed_out:
                raise requests.exceptions.Timeout(str(exc)) from exc
            raise requests.exceptions.ConnectionError(str(exc)) from exc
        return answer


def _dumps(value: Any) -> bytes:
    return json.dumps(value).encode()


def install(client: "Etcd3Client") -> bool:
    """Give etcd3gw's ``client`` a kept-alive session; False when it keeps
    its own (it has no requests session)."""
    session = getattr(client, "session", None)
    if not isinstance(session, requests.Session):
        return False
    base_url = client.base_url
    # a stand-in for the parts of requests' session etcd3gw uses
    client.session = KeptAliveSession(session, base_url, client.timeout)  # type: ignore[assignment]
    return True
