"""The direct transport against a real HTTP server on loopback: kept-alive
connections, a connection the server dropped while idle, a new token after
a 401, TLS with a private CA, proxies from the environment."""

import json
import logging
import pathlib
import ssl
import threading
from collections.abc import Iterator
from http import server
from typing import Any

import pytest
from oslo_config import cfg

from inspector import exceptions
from inspector.baremetal import direct
from inspector.baremetal.client import BaremetalClient
from inspector.conf import opts
from lab.waiting import wait_until
from tests.unit.net import certs as certs_mod

NODE = {"uuid": "u1", "name": "n1", "provision_state": "manageable"}


class Recorder(server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    seen: list[dict[str, Any]]
    peers: set[tuple[str, int]]
    script: list[tuple[int, Any, dict[str, str]]]

    def log_message(self, *_args: Any) -> None:
        return

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.seen.append(
            {
                "method": self.command,
                "path": self.path,
                "headers": dict(self.headers),
                "body": json.loads(body) if body else None,
            }
        )
        self.peers.add(self.client_address)
        status, answer, headers = self.script.pop(0) if self.script else (200, NODE, {})
        data = json.dumps(answer).encode() if answer is not None else b""
        self.send_response(status)
        for key, value in headers.items():
            if key != "drop":
                self.send_header(key, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        if headers.get("Connection") == "close" or "drop" in headers:
            # "drop": closed without saying so, as a server whose keep-alive
            # timeout ran out while the connection sat idle
            self.close_connection = True

    do_GET = do_PATCH = do_POST = do_PUT = do_DELETE = _answer  # noqa: N815


class Server(server.ThreadingHTTPServer):
    """Counts the connections it closed."""

    closed = 0

    def shutdown_request(self, request: Any) -> None:
        super().shutdown_request(request)
        self.closed += 1


class Ironic:
    """A recording HTTP server on 127.0.0.1 (TLS when given a context)."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        handler = type(
            "Handler", (Recorder,), {"seen": [], "peers": set(), "script": []}
        )
        self.handler: Any = handler
        self.httpd = Server(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        # shutdown() waits for serve_forever's next poll
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self.thread.start()

    def url(self, scheme: str = "http") -> str:
        host = "localhost" if scheme == "https" else "127.0.0.1"
        return f"{scheme}://{host}:{self.port}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def ironic() -> Iterator[Ironic]:
    srv = Ironic()
    yield srv
    srv.stop()


def make_client(endpoint: str, **ironic_opts: Any) -> BaremetalClient:
    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    conf([])
    conf.set_override("auth_type", "none", group="ironic")
    conf.set_override("endpoint_override", endpoint, group="ironic")
    conf.set_override("max_retries", 1, group="ironic")
    conf.set_override("retry_interval", 0, group="ironic")
    for key, value in ironic_opts.items():
        conf.set_override(key, value, group="ironic")
    return BaremetalClient(conf)


def test_the_client_goes_direct_and_keeps_its_connection(ironic: Ironic) -> None:
    client = make_client(ironic.url())
    for _ in range(5):
        assert client.get_node("u1")["uuid"] == "u1"
    assert isinstance(client._conn, direct.DirectTransport)
    assert len(ironic.handler.seen) == 5
    assert len(ironic.handler.peers) == 1


def test_headers_and_bodies(ironic: Ironic) -> None:
    client = make_client(ironic.url())
    client.patch_node("u1", [{"op": "add", "path": "/extra/a", "value": 1}])
    client.get_node("u1")
    patch, get = ironic.handler.seen
    assert patch["method"] == "PATCH" and patch["path"] == "/v1/nodes/u1"
    assert patch["body"] == [{"op": "add", "path": "/extra/a", "value": 1}]
    assert patch["headers"]["Content-Type"] == "application/json"
    assert patch["headers"]["X-OpenStack-Ironic-API-Version"] == "1.80"
    assert patch["headers"]["User-Agent"].startswith("ironic-inspector/")
    assert get["path"].startswith("/v1/nodes/u1?fields=uuid,")
    assert "Content-Type" not in get["headers"]


def test_a_connection_closed_while_idle_is_replaced(ironic: Ironic) -> None:
    client = make_client(ironic.url())
    client._adapter()
    transport = client._conn
    assert isinstance(transport, direct.DirectTransport)
    url = ironic.url() + "/v1/nodes/u1"
    ironic.handler.script.append((200, NODE, {"drop": "1"}))
    assert transport.request(url, "GET").status_code == 200
    wait_until(lambda: ironic.httpd.closed, 5, "the server to close the connection")
    # no retry of the client's: the transport itself opens a new connection
    assert transport.request(url, "GET").status_code == 200
    assert len(ironic.handler.seen) == 2
    assert len(ironic.handler.peers) == 2


def test_connection_close_answers_are_not_kept(ironic: Ironic) -> None:
    ironic.handler.script += [(200, NODE, {"Connection": "close"})] * 2
    client = make_client(ironic.url())
    client.get_node("u1")
    client.get_node("u1")
    assert isinstance(client._conn, direct.DirectTransport)
    assert len(ironic.handler.peers) == 2


def test_nobody_listening_is_cannot_reach(ironic: Ironic) -> None:
    url = ironic.url()
    ironic.stop()
    client = make_client(url)
    with pytest.raises(exceptions.BaremetalError, match="cannot reach Ironic"):
        client.get_node("u1")


def test_errors_keep_ironic_text(ironic: Ironic) -> None:
    fault = json.dumps({"faultstring": "Node u1 could not be found."})
    ironic.handler.script.append((404, {"error_message": fault}, {}))
    with pytest.raises(exceptions.NodeNotFound):
        make_client(ironic.url()).get_node("u1")


class Tokens:
    """An auth plugin handing out numbered tokens."""

    def __init__(self) -> None:
        self.issued = 0
        self.token = "t0"

    def get_headers(self, session: Any, **kwargs: Any) -> dict[str, str]:
        return {"X-Auth-Token": self.token}

    def invalidate(self) -> bool:
        self.issued += 1
        self.token = f"t{self.issued}"
        return True


def test_a_401_gets_one_new_token(ironic: Ironic) -> None:
    from keystoneauth1 import adapter, session

    tokens = Tokens()
    sess = session.Session(auth=tokens)  # type: ignore[arg-type]
    transport = direct.DirectTransport(
        adapter.Adapter(sess, additional_headers={"X": "1"}), ironic.url()
    )
    ironic.handler.script.append((401, {"error_message": "expired"}, {}))
    answer = transport.request(ironic.url() + "/v1/nodes/u1", "GET")
    assert answer.status_code == 200
    sent = [seen["headers"]["X-Auth-Token"] for seen in ironic.handler.seen]
    assert sent == ["t0", "t1"]
    # a second 401 in a row is the caller's to see
    ironic.handler.script += [(401, None, {}), (401, None, {})]
    assert transport.request(ironic.url() + "/v1/nodes/u1", "GET").status_code == 401


def test_tls_with_a_private_ca(
    tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    made = certs_mod.make_certs(tmp_path)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(made.server.cert, made.server.key)
    srv = Ironic(tls)
    try:
        trusted = make_client(srv.url("https"), cafile=str(made.ca.cert))
        assert trusted.get_node("u1")["uuid"] == "u1"
        assert isinstance(trusted._conn, direct.DirectTransport)
        untrusted = make_client(srv.url("https"))
        with pytest.raises(exceptions.BaremetalError, match="CERTIFICATE_VERIFY"):
            untrusted.get_node("u1")
        insecure = make_client(srv.url("https"), insecure=True)
        with caplog.at_level(logging.WARNING, logger="inspector.connection_pool"):
            assert insecure.get_node("u1")["uuid"] == "u1"
            assert insecure.get_node("u1")["uuid"] == "u1"
        warned = [r for r in caplog.records if "not verified" in r.getMessage()]
        assert len(warned) == 1  # once per server, not per request
    finally:
        srv.stop()


def test_a_proxy_from_the_environment_is_used(
    ironic: Ironic, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the recording server is the proxy: it is sent the whole URL
    monkeypatch.setenv("http_proxy", ironic.url())
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    client = make_client("http://ironic.test:6385")
    assert client.get_node("u1")["uuid"] == "u1"
    assert client.get_node("u1")["uuid"] == "u1"
    assert isinstance(client._conn, direct.DirectTransport)
    first, _ = ironic.handler.seen
    assert first["path"].startswith("http://ironic.test:6385/v1/nodes/u1?")
    assert len(ironic.handler.peers) == 1
