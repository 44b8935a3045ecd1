"""A threaded production WSGI server (cheroot) for the standalone process.

It listens on ``listen_address``/``listen_port`` or on the Unix socket
``listen_unix_socket`` (see :mod:`inspector.net.listen`), over HTTPS when
``use_ssl`` is set (see :mod:`inspector.net.tls`).
"""

import logging
import os
import re
import socket
import threading
from typing import TYPE_CHECKING, Any

from cheroot import wsgi
from cheroot.ssl.builtin import BuiltinSSLAdapter

from inspector import exceptions
from inspector.net import address, listen, tls

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)

LISTEN_BACKLOG = 1024


class _Server(wsgi.Server):
    """cheroot's server, giving a Unix socket its mode before it binds.

    cheroot opens the socket to everyone (0777 less the umask) before
    binding; narrowing it after would leave a moment where a wider mode
    than asked for is on the file.
    """

    socket_mode: int | None = None

    def bind_socket(self, socket_: socket.socket, bind_addr: Any) -> socket.socket:  # type: ignore[override]
        if self.socket_mode is not None and socket_.family == socket.AF_UNIX:
            # Linux creates the file with the socket's mode less the umask
            os.fchmod(socket_.fileno(), self.socket_mode)
        socket_.bind(bind_addr)
        return socket_


class WSGIServer:
    """Serves ``app`` on its own threads until :meth:`stop`.

    ``unix_socket`` replaces ``host`` and ``port``; ``https`` makes it
    HTTPS only.
    """

    def __init__(
        self,
        app: Any,
        host: str,
        port: int,
        threads: int,
        *,
        unix_socket: str | None = None,
        socket_mode: int | None = None,
        https: tls.ServerTLS | None = None,
        name: str = "API",
        option: str | None = None,
    ) -> None:
        self.name = name
        """What listens, for the log."""
        self.option = option
        """The options that set the address, named when it cannot be used."""
        self.host = host
        self.port = port
        self.unix_socket = unix_socket
        self.socket_mode = socket_mode if unix_socket else None
        self.https = https
        self._socket_identity: tuple[int, int] | None = None
        bind_addr: Any = unix_socket if unix_socket else (host, port)
        self._server = _Server(
            bind_addr, app, numthreads=threads, server_name="ironic-inspector"
        )
        self._server.socket_mode = self.socket_mode
        if https is not None:
            self._server.ssl_adapter = _adapter(https)
        # cheroot's default listen backlog of 5 drops SYNs under a burst of
        # clients (each costing a 1 s retransmit); ramdisks arrive in bursts
        self._server.request_queue_size = LISTEN_BACKLOG
        # with a numeric limit cheroot counts its idle connections under the
        # selector's lock after every response, serialising the worker
        # threads; idle keep-alive connections still expire after the
        # server's socket timeout
        self._server.keep_alive_conn_limit = None  # type: ignore[assignment]
        self._thread: threading.Thread | None = None

    @classmethod
    def from_conf(
        cls,
        app: Any,
        conf: "cfg.ConfigOpts",
        host: str | None = None,
        port: int | None = None,
        threads: int | None = None,
    ) -> "WSGIServer":
        """The API's server as ``conf`` describes it; arguments override it.

        :raises ConfigError: a bad TLS option, or ``host``/``port`` given
            with ``listen_unix_socket``; each names the option.
        """
        settings = tls.server_tls(conf)
        if conf.listen_unix_socket and (host or port):
            raise exceptions.ConfigError(
                "[DEFAULT]listen_unix_socket is set: the API listens on "
                f"{conf.listen_unix_socket}, not on a host and port given "
                "on the command line"
            )
        return cls(
            app,
            host or conf.listen_address,
            port or conf.listen_port,
            threads or conf.api_threads,
            unix_socket=conf.listen_unix_socket or None,
            socket_mode=conf.listen_unix_socket_mode,
            https=settings,
        )

    @property
    def scheme(self) -> str:
        return "https" if self.https is not None else "http"

    def where(self) -> str:
        """Where the API listens, for the log."""
        if self.unix_socket:
            mode = (
                f"mode {self.socket_mode:04o}"
                if self.socket_mode is not None
                else "mode from the umask"
            )
            return f"{self.scheme} on Unix socket {self.unix_socket} ({mode})"
        return f"{self.scheme}://{address.url_host(self.host)}:{self.port}"

    def start(self) -> None:
        if self.unix_socket:
            listen.check_socket_path(self.unix_socket)
        try:
            self._server.prepare()
        except OSError as exc:
            target = self.unix_socket or f"{self.host}:{self.port}"
            named = f" ({self.option})" if self.option else ""
            raise exceptions.ConfigError(
                f"Cannot listen on {target}{named}: {_os_reason(exc)}"
            ) from exc
        if self.unix_socket:
            try:
                self._socket_identity = listen.apply_mode(
                    self.unix_socket, self.socket_mode
                )
            except exceptions.ConfigError:
                self._close()
                raise
        # said before the first request can be served: the socket listens
        # from prepare() on, and a client that got an answer finds the line
        LOG.info("%s listening on %s", self.name, self.where())
        self._thread = threading.Thread(
            target=self._server.serve, name="wsgi", daemon=True
        )
        self._thread.start()

    def _close(self) -> None:
        """Undo a :meth:`start` that bound the socket but did not serve."""
        self._server.stop()
        if self.unix_socket:
            listen.remove_socket(self.unix_socket, None)

    def stop(self) -> None:
        self._server.stop()
        if self._thread is not None:
            self._thread.join(10)
        if self.unix_socket and self._socket_identity is not None:
            listen.remove_socket(self.unix_socket, self._socket_identity)
            self._socket_identity = None


def _os_reason(exc: OSError) -> str:
    """ "Address already in use" rather than cheroot's nested tuple text."""
    if exc.strerror:
        return exc.strerror
    found = re.search(r"\[Errno \d+\] ([^)\]]+)", str(exc))
    return found.group(1) if found else str(exc)


def _adapter(settings: tls.ServerTLS) -> BuiltinSSLAdapter:
    """cheroot's builtin adapter, wrapping connections with our context.

    The adapter builds a context of its own from the files (without client
    verification, whatever the CA file); it is replaced by the one
    :mod:`inspector.net.tls` built and checked.
    """
    adapter = BuiltinSSLAdapter(settings.cert_file, settings.key_file)
    adapter.context = settings.context
    return adapter
