"""lab/rabbitmq_server: when a broker counts as started."""

import pathlib
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from lab.servers.rabbitmq import RabbitMQServer

CONNECTION_START = b"\x01\x00\x00\x00\x00\x01\xf4\x00\x0a\x00\x0a" + b"\x00" * 20
"""The first bytes of a broker's connection.start method frame."""


def _listener(answer: bytes | None) -> tuple[socket.socket, threading.Thread]:
    """A one-connection server that reads the protocol header, then sends
    ``answer`` (None: closes at once)."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _addr = server.accept()
        with conn:
            assert conn.recv(8) == b"AMQP\x00\x00\x09\x01"
            if answer is not None:
                conn.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return server, thread


@pytest.fixture
def running() -> Iterator[subprocess.Popen[bytes]]:
    """A live process standing in for the broker's."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc
    proc.kill()
    proc.wait()


@pytest.mark.parametrize(
    ("answer", "greets"),
    [
        (CONNECTION_START, True),
        (None, False),  # accepted, then closed: still booting
        (b"HTTP/1.1 400 Bad Request\r\n\r\n", False),  # not a broker
    ],
)
def test_a_broker_has_started_when_it_greets_an_amqp_client(
    tmp_path: pathlib.Path,
    running: subprocess.Popen[bytes],
    answer: bytes | None,
    greets: bool,
) -> None:
    server, thread = _listener(answer)
    with server:
        broker = RabbitMQServer(tmp_path, port=server.getsockname()[1])
        broker._proc = running
        assert broker._greets() is greets
        thread.join(5)


def test_a_broker_that_exited_fails_the_wait(tmp_path: pathlib.Path) -> None:
    broker = RabbitMQServer(tmp_path)
    broker._proc = subprocess.Popen([sys.executable, "-c", "pass"])
    broker._proc.wait()
    with pytest.raises(RuntimeError, match="exited"):
        broker._greets()
