"""A server in a thread of the lab's own process: an HTTP request handler
served on 127.0.0.1 (the Keystone stand-in, a static Redfish BMC)."""

import http.server
import threading
from typing import Self


class ThreadedHttpServer:
    """``handler`` served on 127.0.0.1 by a thread per request.

    The port is bound when the object is made (``port`` 0: any free one,
    known at once); :meth:`start` begins serving, :meth:`stop` ends it and
    closes the port. It implements :class:`lab.servers.server.Server`.
    """

    def __init__(
        self,
        handler: type[http.server.BaseHTTPRequestHandler],
        name: str,
        port: int = 0,
    ) -> None:
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=name, daemon=True
        )
        self._stopped = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 5.0) -> None:
        """Serve from now on (the port listens already: nothing to wait for)."""
        self._thread.start()

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()
