"""A threaded production WSGI server (cheroot) for the standalone process."""

import logging
import threading
from typing import Any

from cheroot import wsgi

from inspector import exceptions

LOG = logging.getLogger(__name__)

LISTEN_BACKLOG = 1024


class WSGIServer:
    """Serves ``app`` on its own threads until :meth:`stop`."""

    def __init__(self, app: Any, host: str, port: int, threads: int) -> None:
        self.host = host
        self.port = port
        self._server = wsgi.Server(
            (host, port), app, numthreads=threads, server_name="ironic-inspector"
        )
        # cheroot's default listen backlog of 5 drops SYNs under a burst of
        # clients (each costing a 1 s retransmit); ramdisks arrive in bursts
        self._server.request_queue_size = LISTEN_BACKLOG
        # with a numeric limit cheroot counts its idle connections under the
        # selector's lock after every response, serialising the worker
        # threads; idle keep-alive connections still expire after the
        # server's socket timeout
        self._server.keep_alive_conn_limit = None  # type: ignore[assignment]
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        try:
            self._server.prepare()
        except OSError as exc:
            raise exceptions.ConfigError(
                f"Cannot listen on {self.host}:{self.port}: {exc.strerror or exc}"
            ) from exc
        self._thread = threading.Thread(
            target=self._server.serve, name="wsgi", daemon=True
        )
        self._thread.start()
        LOG.info("API listening on http://%s:%s", self._display_host(), self.port)

    def _display_host(self) -> str:
        return f"[{self.host}]" if ":" in self.host else self.host

    def stop(self) -> None:
        self._server.stop()
        if self._thread is not None:
            self._thread.join(10)
