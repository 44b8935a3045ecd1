"""api-call's timeout is a total deadline, not one per read."""

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from inspector import exceptions
from inspector.rules import api_call


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
