"""A conductor's JSON-RPC endpoint: the allow-listed RPC methods of its
manager, behind authentication, on a threaded production server (cheroot,
as the standalone API).

Nothing outside :data:`METHODS` runs: any other name is "method not found".
A call returns once the conductor has claimed the step (the work itself runs
in the conductor's work pool), so an answer means the work is owned.
"""

import logging
import uuid as uuid_lib
from collections.abc import Callable, Iterable
from typing import Any

from oslo_config import cfg

from inspector import exceptions
from inspector.jsonrpc import auth, endpoint, protocol
from inspector.net import tls
from inspector.net.address import is_loopback
from inspector.net.wsgi_server import WSGIServer

LOG = logging.getLogger(__name__)

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

STEP_PARAMS = {"uuid": str, "version": int}

METHODS: dict[str, dict[str, type]] = {
    "start_introspection": STEP_PARAMS,
    "process": STEP_PARAMS,
    "reapply": STEP_PARAMS,
    "abort": STEP_PARAMS,
    "ping": {},
}
"""The RPC methods a caller may name, with their parameters (besides the
optional ``context``, which is ignored). ``ping`` does nothing and answers
the conductor's host: the health check and the status command use it."""

JSON = [("Content-Type", "application/json")]


def _checked(request: protocol.Request) -> dict[str, Any]:
    """The call's parameters, checked against :data:`METHODS`.

    :raises RpcError: an unknown method or bad parameters.
    """
    spec = METHODS.get(request.method)
    if spec is None:
        raise protocol.RpcError(
            protocol.METHOD_NOT_FOUND,
            f"method {request.method[:64]!r} not found",
            request.request_id,
        )
    params = {k: v for k, v in request.params.items() if k != "context"}
    unknown = sorted(set(params) - set(spec))
    missing = sorted(set(spec) - set(params))
    if unknown or missing:
        raise protocol.RpcError(
            protocol.INVALID_PARAMS,
            f"{request.method} takes {', '.join(spec) or 'no parameters'}"
            + (f"; unknown: {', '.join(p[:32] for p in unknown)}" if unknown else "")
            + (f"; missing: {', '.join(missing)}" if missing else ""),
            request.request_id,
        )
    for name, kind in spec.items():
        value = params[name]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise protocol.RpcError(
                protocol.INVALID_PARAMS,
                f"{name} must be {'a string' if kind is str else 'an integer'}",
                request.request_id,
            )
    if "uuid" in params:
        try:
            uuid_lib.UUID(params["uuid"])
        except ValueError:
            raise protocol.RpcError(
                protocol.INVALID_PARAMS, "uuid is not a UUID", request.request_id
            ) from None
    return params


class RpcApp:
    """The WSGI application: POST / with one JSON-RPC request."""

    def __init__(self, manager: Any, host: str, max_body: int) -> None:
        self.manager = manager
        self.host = host
        self.max_body = max_body

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        try:
            request = self._request(environ)
            params = _checked(request)
            value = self._dispatch(request, params)
        except protocol.RpcError as exc:
            body = protocol.error(exc)
            start_response(_status(exc.http_status), _headers(body))
            return [body]
        if request.is_notification:
            start_response("204 No Content", [])
            return []
        body = protocol.result(request.request_id, value)
        start_response("200 OK", _headers(body))
        return [body]

    def _request(self, environ: dict[str, Any]) -> protocol.Request:
        if environ.get("REQUEST_METHOD") != "POST":
            raise _HttpError(405, "JSON-RPC requests are POSTed")
        if (environ.get("PATH_INFO") or "/") != "/":
            raise _HttpError(404, "the JSON-RPC endpoint is /")
        kind = (environ.get("CONTENT_TYPE") or "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise _HttpError(415, "the body must be application/json")
        try:
            length = int(environ.get("CONTENT_LENGTH") or -1)
        except ValueError:
            length = -1
        if length > self.max_body:
            raise _HttpError(
                413,
                f"the body is larger than {self.max_body} bytes "
                "([json_rpc]max_request_body_size)",
            )
        stream = environ["wsgi.input"]
        body = stream.read(length) if length >= 0 else stream.read(self.max_body + 1)
        if len(body) > self.max_body:
            raise _HttpError(
                413,
                f"the body is larger than {self.max_body} bytes "
                "([json_rpc]max_request_body_size)",
            )
        return protocol.parse(body)

    def _dispatch(self, request: protocol.Request, params: dict[str, Any]) -> Any:
        if request.method == "ping":
            return {"host": self.host}
        if getattr(self.manager, "draining", False):
            # stopping: the API takes this as "not taken" and calls another
            raise protocol.RpcError(
                protocol.UNAVAILABLE,
                f"conductor {self.host} is stopping: it takes no new work",
                request.request_id,
            )
        method = getattr(self.manager, request.method)
        LOG.debug(
            "JSON-RPC %s of node %s (version %s)",
            request.method,
            params["uuid"],
            params["version"],
        )
        try:
            method({}, uuid=params["uuid"], version=params["version"])
        except exceptions.ServiceUnavailable as exc:
            raise protocol.RpcError(
                protocol.UNAVAILABLE,
                f"conductor {self.host} cannot take work: {exc}",
                request.request_id,
            ) from exc
        except Exception as exc:
            LOG.exception("JSON-RPC %s failed", request.method)
            raise protocol.RpcError(
                protocol.INTERNAL_ERROR,
                f"conductor {self.host} failed: {type(exc).__name__}",
                request.request_id,
            ) from exc
        return None


class _HttpError(protocol.RpcError):
    """A request refused before it is parsed, with its own HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(protocol.INVALID_REQUEST, message)
        self._status = status

    @property
    def http_status(self) -> int:
        return self._status


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    413: "Payload Too Large",
    415: "Unsupported Media Type",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


def _status(code: int) -> str:
    return f"{code} {_REASONS.get(code, 'Error')}"


def _headers(body: bytes) -> list[tuple[str, str]]:
    return JSON + [("Content-Length", str(len(body)))]


class JsonRpcServer:
    """One conductor's endpoint, as ``[json_rpc]`` describes it."""

    refuses_while_draining = True
    """A stopping conductor keeps it up until its work is done: calls get
    "stopping" (and go to another conductor) instead of a refused
    connection, which would look like a dead one."""

    def __init__(self, conf: cfg.ConfigOpts, manager: Any = None) -> None:
        """Checks every option (TLS files, the htpasswd file) at once;
        ``manager`` may be bound later, before :meth:`start`."""
        opts = conf.json_rpc
        self.strategy = auth.strategy(conf)
        https = None
        if opts.use_ssl:
            for name in ("cert_file", "key_file"):
                if not opts[name]:
                    raise exceptions.ConfigError(
                        f"Invalid configuration: [json_rpc]use_ssl is True but "
                        f"[json_rpc]{name} is not set"
                    )
            context = tls.build_context(
                opts.cert_file, opts.key_file, group="[json_rpc]"
            )
            https = tls.ServerTLS(context, opts.cert_file, opts.key_file)
        self.app = RpcApp(manager, conf.host, opts.max_request_body_size)
        self.url = endpoint.advertised(conf)
        self._server = WSGIServer(
            auth.wrap(self.app, conf),
            opts.host_ip,
            opts.port,
            opts.threads,
            https=https,
            name="JSON-RPC",
            option="[json_rpc]host_ip/port",
        )
        self._exposed = not is_loopback(opts.host_ip)

    def bind(self, manager: Any) -> None:
        """The conductor manager whose methods the calls run."""
        self.app.manager = manager

    def start(self) -> None:
        """Listen (a port in use fails here, naming the options)."""
        if self.app.manager is None:
            raise RuntimeError("no conductor manager bound")
        if self._exposed and self.strategy == "noauth":
            LOG.warning(
                "JSON-RPC authentication is DISABLED ([json_rpc]auth_strategy = "
                "noauth) and the server listens beyond loopback (%s): anyone who "
                "reaches port %s can hand this conductor work. Use http_basic "
                "or keystone, or listen on a private address only.",
                self._server.where(),
                self._server.port,
            )
        if self._exposed and self._server.https is None:
            LOG.warning(
                "JSON-RPC is not encrypted ([json_rpc]use_ssl = False) and the "
                "server listens beyond loopback (%s): calls and credentials "
                "cross the network in clear text. Set use_ssl, cert_file and "
                "key_file.",
                self._server.where(),
            )
        self._server.start()
        LOG.info("Conductor reachable at %s (published in the group)", self.url)

    def stop(self) -> None:
        """Stop taking calls; a call in progress finishes first."""
        self._server.stop()

    def wait(self) -> None:
        """Nothing more to wait for once :meth:`stop` returned."""
