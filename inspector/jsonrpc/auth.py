"""Who may call a conductor: ``[json_rpc]auth_strategy`` in front of the
JSON-RPC application.

- ``noauth``: everyone;
- ``http_basic``: users of ``[json_rpc]http_basic_auth_user_file``;
- ``keystone``: a valid token (keystonemiddleware, ``[keystone_authtoken]``)
  holding one of ``[json_rpc]allowed_roles``.

A refused call gets 401 (or 403 for a token without the role) with a
JSON-RPC error body, before anything is parsed; credentials and tokens are
never logged.
"""

import logging
from collections.abc import Callable, Iterable
from typing import Any

from oslo_config import cfg

from inspector import exceptions
from inspector.jsonrpc import protocol
from inspector.net.htpasswd import Htpasswd, authenticated_user

LOG = logging.getLogger(__name__)

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def strategy(conf: cfg.ConfigOpts) -> str:
    """``[json_rpc]auth_strategy``, or ``[DEFAULT]auth_strategy`` when no
    file sets the former (Ironic's rule)."""
    location = conf.get_location("auth_strategy", "json_rpc")
    if location is not None and location.location == cfg.Locations.opt_default:
        return str(conf.auth_strategy)
    return str(conf.json_rpc.auth_strategy)


def _refuse(
    start_response: Callable[..., Any], status: int, message: str, challenge: str
) -> Iterable[bytes]:
    code = protocol.UNAUTHORIZED if status == 401 else protocol.FORBIDDEN
    body = protocol.error(protocol.RpcError(code, message))
    headers = [
        ("Content-Type", "application/json"),
        ("Content-Length", str(len(body))),
    ]
    if status == 401:
        headers.append(("WWW-Authenticate", challenge))
    reason = "Unauthorized" if status == 401 else "Forbidden"
    start_response(f"{status} {reason}", headers)
    return [body]


class BasicGate:
    """HTTP basic authentication against an htpasswd file."""

    CHALLENGE = 'Basic realm="ironic-inspector-conductor"'

    def __init__(self, app: WSGIApp, path: str) -> None:
        self._app = app
        self.users = Htpasswd(path, "[json_rpc]http_basic_auth_user_file", strict=True)

    def _valid(self, environ: dict[str, Any]) -> bool:
        return authenticated_user(environ, self.users) is not None

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        if not self._valid(environ):
            return _refuse(
                start_response,
                401,
                "authentication required: valid HTTP basic credentials "
                "([json_rpc]http_basic_username and http_basic_password)",
                self.CHALLENGE,
            )
        return self._app(environ, start_response)


class RoleGate:
    """Behind keystonemiddleware: a confirmed token with an allowed role."""

    def __init__(self, app: WSGIApp, allowed: list[str]) -> None:
        self._app = app
        self.allowed = {role.strip().lower() for role in allowed if role.strip()}

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        if environ.get("HTTP_X_IDENTITY_STATUS") != "Confirmed":
            return _refuse(
                start_response,
                401,
                "authentication required: a valid Keystone token in X-Auth-Token",
                "Keystone uri='keystone'",
            )
        roles = {r.strip().lower() for r in environ.get("HTTP_X_ROLES", "").split(",")}
        if not roles & self.allowed:
            return _refuse(
                start_response,
                403,
                "the token has none of the roles [json_rpc]allowed_roles "
                f"lists ({', '.join(sorted(self.allowed))})",
                "",
            )
        return self._app(environ, start_response)


def wrap(app: WSGIApp, conf: cfg.ConfigOpts) -> WSGIApp:
    """``app`` behind the configured strategy.

    :raises ConfigError: an htpasswd file that cannot be read or parsed, or
        keystone without ``[keystone_authtoken]``; each names the option.
    """
    chosen = strategy(conf)
    if chosen == "http_basic":
        return BasicGate(app, conf.json_rpc.http_basic_auth_user_file)
    if chosen == "keystone":
        from keystonemiddleware import auth_token

        for group, options in auth_token.list_opts():
            conf.register_opts(options, group=group)
        if not conf.keystone_authtoken.auth_type:
            raise exceptions.ConfigError(
                "Invalid configuration: [json_rpc]auth_strategy = keystone needs "
                "[keystone_authtoken] with the conductor's own credentials "
                "(auth_type, auth_url, username, ...) to validate tokens"
            )
        return auth_token.AuthProtocol(
            RoleGate(app, conf.json_rpc.allowed_roles),
            {"oslo_config_config": conf, "delay_auth_decision": True},
        )
    return app
