"""The API's side of JSON-RPC: one call to one conductor's endpoint.

:class:`JsonRpcSender` plugs into :class:`~inspector.conductor.rpcapi.
ConductorClient`, which picks the conductor and moves on to another when a
call fails. Every failure (refused, timed out, TLS, 401, a JSON-RPC error)
is one :class:`CallFailed` with a one-line cause; credentials never appear
in it.
"""

import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import requests
import urllib3
from oslo_config import cfg

from inspector import exceptions
from inspector.jsonrpc import auth, protocol
from inspector.net import tls

LOG = logging.getLogger(__name__)

READY_FOR = 30.0
"""Seconds a conductor that answered this process's ping counts as ready
without another ping (see :meth:`JsonRpcSender.ready`)."""

CONNECT_TIMEOUT = 2.0
"""Seconds to open a connection to a conductor (at most [json_rpc]timeout)."""


class CallFailed(Exception):
    """The conductor did not take the call; ``str()`` says why in one line."""


class JsonRpcSender:
    """Sends calls over one pooled HTTP session (keep-alive per conductor).

    ``resolve`` maps a conductor host to the URL it published.
    """

    transport = "json-rpc"

    def __init__(
        self, conf: cfg.ConfigOpts, resolve: Callable[[str], str | None]
    ) -> None:
        opts = conf.json_rpc
        self._resolve = resolve
        self.timeout = float(opts.timeout)
        self.connect_retries = int(opts.connect_retries)
        self._ids = itertools.count(1)
        self._guard = threading.Lock()
        self._ready: dict[str, float] = {}
        """URL -> until when it counts as ready."""
        self._session = requests.Session()
        # the configuration decides, not the environment (proxies, CA bundle)
        self._session.trust_env = False
        adapter = requests.adapters.HTTPAdapter(pool_connections=8, pool_maxsize=32)
        self._session.mount("http://", adapter)
        self._session.mount("https://", adapter)
        for name in ("cafile", "certfile", "keyfile"):
            if opts[name]:  # unreadable: one line at start, not per call
                tls.readable_file(f"[json_rpc]{name}", opts[name])
        if opts.insecure:
            self._session.verify = False
            # said once here, not by urllib3 on every call
            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
            LOG.warning(
                "[json_rpc]insecure is True: the conductors' certificates are "
                "not verified; set [json_rpc]cafile instead"
            )
        elif opts.cafile:
            self._session.verify = opts.cafile
        if opts.certfile:
            self._session.cert = (
                (opts.certfile, opts.keyfile) if opts.keyfile else opts.certfile
            )
        self.strategy = auth.strategy(conf)
        self._token: Callable[[], str] | None = None
        if self.strategy == "http_basic":
            if not opts.http_basic_username or opts.http_basic_password is None:
                from inspector import exceptions

                raise exceptions.ConfigError(
                    "Invalid configuration: [json_rpc]auth_strategy = http_basic "
                    "needs [json_rpc]http_basic_username and http_basic_password "
                    "(the API's credentials for the conductors)"
                )
            self._session.auth = (opts.http_basic_username, opts.http_basic_password)
        elif self.strategy == "keystone":
            self._token = _keystone_token(conf)

    def ready(self, host: str) -> None:
        """An authenticated ping to ``host`` unless it answered one (or took
        a call) in the last :data:`READY_FOR` seconds: an operator's start
        gets its 503 before anything is recorded when no conductor accepts
        this API's credentials or certificate.

        :raises CallFailed: it did not answer as ``host``.
        """
        url = self._url(host)
        with self._guard:
            if time.monotonic() < self._ready.get(url, 0.0):
                return
        result = self.call(url, "ping", {})
        answered = result.get("host") if isinstance(result, dict) else None
        if answered != host:
            raise CallFailed(f"{url}: answered as {answered!r}, not as {host!r}")

    def _url(self, host: str) -> str:
        url = self._resolve(host)
        if url is None:
            raise CallFailed(
                f"conductor {host} published no JSON-RPC endpoint (is it on "
                "[DEFAULT]rpc_transport = json-rpc?)"
            )
        return url

    def send(self, host: str, method: str, params: dict[str, Any]) -> Any:
        """Call ``method`` on conductor ``host``; its result.

        :raises CallFailed: it was not taken (the cause in one line).
        """
        return self.call(self._url(host), method, params)

    def call(self, url: str, method: str, params: dict[str, Any]) -> Any:
        """Call ``method`` at ``url`` (the status command pings this way)."""
        body = protocol.request(method, {"context": {}, **params}, next(self._ids))
        headers = {"Content-Type": "application/json"}
        if self._token is not None:
            try:
                headers["X-Auth-Token"] = self._token()
            except Exception as exc:  # keystoneauth's many failures
                raise CallFailed(
                    f"no Keystone token for JSON-RPC: {type(exc).__name__}: "
                    f"{_first_line(exc)}"
                ) from exc
        connect = min(CONNECT_TIMEOUT, self.timeout)
        for attempt in range(self.connect_retries + 1):
            try:
                response = self._session.post(
                    url, data=body, headers=headers, timeout=(connect, self.timeout)
                )
                break
            except requests.exceptions.SSLError as exc:
                raise CallFailed(f"{url}: TLS failed: {_first_line(exc)}") from exc
            except requests.exceptions.ConnectTimeout as exc:
                failure = f"{url}: no connection within {connect:g} s"
                error: Exception = exc
            except requests.exceptions.ConnectionError as exc:
                failure = f"{url}: {_connection_cause(exc)}"
                error = exc
            except requests.exceptions.Timeout as exc:
                raise CallFailed(f"{url}: no answer within {self.timeout:g} s") from exc
            except requests.exceptions.RequestException as exc:
                raise CallFailed(f"{url}: {_first_line(exc)}") from exc
            if attempt == self.connect_retries:
                raise CallFailed(failure) from error
        result = _result(url, response)
        with self._guard:  # it took a call with our credentials
            self._ready[url] = time.monotonic() + READY_FOR
        return result


def _result(url: str, response: requests.Response) -> Any:
    if response.status_code == 204:
        return None
    try:
        data = response.json()
    except ValueError:
        data = None
    error = data.get("error") if isinstance(data, dict) else None
    if response.status_code in (401, 403):
        raise CallFailed(
            f"{url}: refused with {response.status_code} "
            f"({'wrong credentials' if response.status_code == 401 else 'forbidden'}"
            f": check [json_rpc]auth_strategy and the credentials on both sides)"
        )
    if isinstance(error, dict):
        raise CallFailed(
            f"{url}: error {error.get('code')}: {str(error.get('message'))[:300]}"
        )
    if response.status_code != 200 or not isinstance(data, dict):
        raise CallFailed(
            f"{url}: HTTP {response.status_code} is not a JSON-RPC answer "
            "(is this a conductor's endpoint?)"
        )
    return data.get("result")


def _first_line(exc: BaseException) -> str:
    return exceptions.first_line(exc)[:300]


def _connection_cause(exc: requests.exceptions.ConnectionError) -> str:
    """'connection refused' rather than urllib3's nested reprs."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror
        cause = cause.__cause__ or cause.__context__
    text = _first_line(exc)
    if "Connection refused" in text:
        return "connection refused"
    if "Name or service not known" in text or "NameResolutionError" in text:
        return "the name does not resolve"
    return text


def _keystone_token(conf: cfg.ConfigOpts) -> Callable[[], str]:
    """A function returning a valid token from the [json_rpc] keystoneauth
    options (cached and renewed by keystoneauth)."""
    from keystoneauth1 import loading as ks_loading
    from keystoneauth1 import session as ks_session

    plugin = ks_loading.load_auth_from_conf_options(conf, "json_rpc")
    if plugin is None:
        raise exceptions.ConfigError(
            "Invalid configuration: [json_rpc]auth_strategy = keystone needs "
            "the API's Keystone credentials in [json_rpc] (auth_type, "
            "auth_url, username, password, project_name, ...)"
        )
    session = ks_session.Session(auth=plugin, timeout=float(conf.json_rpc.timeout))

    def token() -> str:
        return str(session.get_token())

    return token
