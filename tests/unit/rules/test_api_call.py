"""api-call's timeout is a total deadline, not one per read."""

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from inspector import exceptions
from inspector.hooks.base import NodeContext
from inspector.rules import api_call, runner, validation


@pytest.fixture
def drip() -> Iterator[str]:
    """A server that answers a byte every 0.1 s: each read is quick, the
    whole answer slow (about 4 s)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    stop = threading.Event()

    def serve() -> None:
        conn, _addr = listener.accept()
        with conn:
            conn.recv(65536)
            for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 40:
                if stop.wait(0.1):
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/hook"
    stop.set()
    listener.close()
    thread.join(5)


def test_timeout_is_total(drip: str) -> None:
    started = time.monotonic()
    with pytest.raises(exceptions.ProcessingError, match="no answer within 0.5 s"):
        api_call._post(drip, {"a": 1}, {}, 0.5)
    # each read took 0.1 s: a per-read timeout of 0.5 s would have waited ~4 s
    assert time.monotonic() - started < 2.0  # loose: the machine is shared


def test_allowed_by_address_as_well_as_by_name() -> None:
    # by name, as written (resolved by the call itself)
    assert api_call.allowed("http://hooks.invalid/x", ["hooks.invalid"]) is None
    # by address: a name for an entry that is an address, and the reverse
    assert api_call.allowed("http://localhost:8080/x", ["127.0.0.1"]) == "127.0.0.1"
    assert api_call.allowed("http://127.0.0.1/x", ["localhost"]) == "127.0.0.1"
    with pytest.raises(ValueError, match="not on .*by name or by address"):
        api_call.allowed("http://localhost/x", ["127.0.0.2"])
    with pytest.raises(ValueError, match="not on"):
        api_call.allowed("http://localhost:81/x", ["127.0.0.1:80"])
    with pytest.raises(ValueError, match="not on"):
        api_call.allowed("http://nowhere.invalid/x", ["127.0.0.1"])


def test_http_goes_to_the_checked_address(monkeypatch: pytest.MonkeyPatch) -> None:
    """A name that resolves elsewhere by the time of the call reaches
    nothing else: the call is sent to the address that was checked."""
    import http.server

    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            seen.append(self.headers["Host"])
            self.send_response(204)
            self.end_headers()

        def log_message(self, *_args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    try:
        url = f"http://hooks.invalid:{port}/hook"  # resolves nowhere by itself
        real = api_call._addresses
        monkeypatch.setattr(
            api_call,
            "_addresses",
            lambda host, p: {"127.0.0.1"} if host == "hooks.invalid" else real(host, p),
        )
        address = api_call.allowed(url, [f"127.0.0.1:{port}"])
        assert address == "127.0.0.1"
        target, host = api_call._pinned(url, address)
        assert (target, host) == (
            f"http://127.0.0.1:{port}/hook",
            f"hooks.invalid:{port}",
        )
        assert api_call._post(url, {}, {"Host": host}, 5, target) == 204
        assert seen == [f"hooks.invalid:{port}"]
        # and as a rule runs it (hooks.invalid itself resolves nowhere)
        rule = validation.validate({"actions": [{"action": "api-call", "url": url}]})
        ctx = NodeContext(uuid="n1", node={"properties": {}, "extra": {}}, ports={})
        settings = runner.RunSettings(allowed_hosts=(f"127.0.0.1:{port}",))
        runner.compile_rules([rule]).apply({"inventory": {}}, ctx, settings)
        assert seen == [f"hooks.invalid:{port}"] * 2
    finally:
        server.shutdown()
        server.server_close()
