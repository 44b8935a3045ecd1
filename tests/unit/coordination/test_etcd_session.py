"""etcd3gw's requests over kept-alive connections, against a recording
HTTP server on loopback standing in for etcd's gateway: bodies as etcd3gw
sends them, one connection for many requests, and failures raised as
etcd3gw raised them before."""

import json
import socket
import threading
import urllib.parse
from collections.abc import Iterator
from http import server
from typing import Any

import etcd3gw
import pytest
import requests
from etcd3gw import exceptions as etcd_exceptions

from inspector.coordination import etcd_session


class Gateway(server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    seen: list[tuple[str, str, Any]]
    peers: set[tuple[str, int]]
    status = 200
    hang = False
    """Answer nothing until the test ends (``let_go``)."""
    let_go: threading.Event

    def log_message(self, *_args: Any) -> None:
        return

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.seen.append((self.command, self.path, json.loads(body) if body else None))
        self.peers.add(self.client_address)
        if self.hang:
            self.let_go.wait(10)
        path = urllib.parse.urlsplit(self.path).path  # a proxy gets the URL
        if path == "/version":
            answer: dict[str, Any] = {"etcdserver": "3.4.30", "etcdcluster": "3.4.0"}
        elif path.endswith("/lease/grant"):
            answer = {"ID": "7", "TTL": "30"}
        else:
            answer = {"succeeded": True, "header": {"revision": "5"}}
        data = json.dumps(answer).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _answer  # noqa: N815


@pytest.fixture
def gateway() -> Iterator[Any]:
    handler: Any = type(
        "Handler",
        (Gateway,),
        {"seen": [], "peers": set(), "let_go": threading.Event()},
    )
    httpd = server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    # shutdown() waits for serve_forever's next poll
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    )
    thread.start()
    handler.port = httpd.server_address[1]
    yield handler
    handler.let_go.set()
    httpd.shutdown()
    httpd.server_close()


def client(port: int, timeout: int = 5) -> Any:
    made = etcd3gw.client(host="127.0.0.1", port=port, timeout=timeout)
    assert etcd_session.install(made)
    assert isinstance(made.session, etcd_session.KeptAliveSession)
    return made


def test_etcd3gw_calls_go_over_one_kept_alive_connection(gateway: Any) -> None:
    etcd = client(gateway.port)
    lease = etcd.lease(30)
    assert lease.id == 7
    txn = {"compare": [], "success": [{"request_put": {"key": "a2V5"}}]}
    assert etcd.transaction(txn)["succeeded"] is True  # sent as data=
    etcd.put("key", "value")  # sent as json=
    assert [(method, path) for method, path, _ in gateway.seen] == [
        ("GET", "/version"),
        ("POST", "/v3/lease/grant"),
        ("POST", "/v3/kv/txn"),
        ("POST", "/v3/kv/put"),
    ]
    assert gateway.seen[1][2] == {"TTL": 30, "ID": 0}
    assert gateway.seen[2][2] == txn
    assert gateway.seen[3][2]["key"] == "a2V5"
    assert len(gateway.peers) == 1  # not one connection per request


def test_errors_are_raised_as_etcd3gw_raised_them(gateway: Any) -> None:
    etcd = client(gateway.port, timeout=1)
    etcd.lease(30)
    gateway.status = 503
    with pytest.raises(etcd_exceptions.ConnectionFailedError):
        etcd.lease(30)
    gateway.status = 500
    with pytest.raises(etcd_exceptions.InternalServerError):
        etcd.lease(30)
    gateway.status = 200
    gateway.hang = True
    with pytest.raises(etcd_exceptions.ConnectionTimeoutError):
        etcd.lease(30)


def test_a_server_that_is_gone_is_a_connection_failure() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there once closed
    etcd = client(port)
    with pytest.raises(etcd_exceptions.ConnectionFailedError):
        etcd.lease(30)


def test_a_streamed_request_goes_to_the_original_session(gateway: Any) -> None:
    etcd = client(gateway.port)
    session = etcd.session
    answer = session.post(
        f"http://127.0.0.1:{gateway.port}/v3/watch", json={}, stream=True
    )
    assert isinstance(answer, requests.Response)
    assert answer.json()["succeeded"] is True


def test_a_proxy_from_the_environment_is_used(
    gateway: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the recording gateway is the proxy: it is sent the whole URL
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{gateway.port}")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    made = etcd3gw.client(host="etcd.test", port=2379)
    assert etcd_session.install(made)
    assert made.lease(30).id == 7
    assert [(m, path) for m, path, _ in gateway.seen] == [
        ("GET", "http://etcd.test:2379/version"),
        ("POST", "http://etcd.test:2379/v3/lease/grant"),
    ]
    assert len(gateway.peers) == 1
