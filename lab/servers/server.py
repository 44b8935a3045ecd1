"""What every launcher of the lab is: a server started with a timeout,
stopped, and reached at a URL."""

from typing import Protocol


class Server(Protocol):
    """A server the lab starts for a demo, a benchmark or a test.

    ``start`` returns once the server answers its clients, within
    ``timeout`` seconds; when it cannot, it stops what it started and raises
    ``RuntimeError`` saying why (the end of the server's log with it).
    ``stop`` ends everything the server started, by PID, never by name: it
    is harmless before ``start`` and a second time, and what it returns is
    the launcher's own (an exit code, or nothing). ``url`` is where its
    clients reach it, in the form they take: ``http://127.0.0.1:PORT`` for
    an HTTP server, ``postgresql+psycopg2://...`` for PostgreSQL,
    ``rabbit://...`` for RabbitMQ, ``redis://...`` and ``memcached://...``.

    Launchers keep their own extra methods (a pause, a reload, a tooz URL
    with options); ``tests/tooling/test_lab_servers.py`` lists every one
    and has mypy check it against this protocol.
    """

    @property
    def url(self) -> str: ...

    def start(self, timeout: float = ...) -> None: ...

    def stop(self) -> object: ...
