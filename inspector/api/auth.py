"""Who is calling: the ``[DEFAULT]auth_strategy`` WSGI layer in front of the API.

Every strategy leaves the caller's identity in the WSGI environment the way
keystonemiddleware does (``HTTP_X_ROLES``, ``HTTP_X_USER_NAME``,
``HTTP_X_IDENTITY_STATUS`` ...), so the policy check reads one format
whatever the strategy. Identity headers sent by the client are removed
first: nobody can claim a role by sending ``X-Roles``.

Public paths answer without credentials; any other request without valid
ones gets 401 here, before the API sees it.
"""

import json
import logging
import re
from collections.abc import Callable, Iterable
from typing import Any

from oslo_config import cfg

from inspector import exceptions
from inspector.api import versions
from inspector.net.htpasswd import Htpasswd, authenticated_user

LOG = logging.getLogger(__name__)

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

PUBLIC = {
    ("GET", "/"),
    ("GET", "/v1"),
    ("GET", "/v1/openapi.json"),
    ("POST", "/v1/continue"),
    ("GET", "/healthcheck"),
    ("HEAD", "/healthcheck"),
    ("GET", "/metrics"),
    ("HEAD", "/metrics"),
}
"""(method, path) answered without credentials: version discovery, the
ramdisk's callback, and the operator endpoints."""

IDENTITY_HEADERS = (
    "HTTP_X_IDENTITY_STATUS",
    "HTTP_X_ROLES",
    "HTTP_X_ROLE",
    "HTTP_X_USER_ID",
    "HTTP_X_USER_NAME",
    "HTTP_X_USER",
    "HTTP_X_USER_DOMAIN_ID",
    "HTTP_X_USER_DOMAIN_NAME",
    "HTTP_X_PROJECT_ID",
    "HTTP_X_PROJECT_NAME",
    "HTTP_X_PROJECT_DOMAIN_ID",
    "HTTP_X_PROJECT_DOMAIN_NAME",
    "HTTP_X_TENANT_ID",
    "HTTP_X_TENANT_NAME",
    "HTTP_X_TENANT",
    "HTTP_X_SYSTEM_SCOPE",
    "HTTP_X_DOMAIN_ID",
    "HTTP_X_DOMAIN_NAME",
    "HTTP_X_SERVICE_ROLES",
    "HTTP_X_SERVICE_IDENTITY_STATUS",
    "HTTP_X_IS_ADMIN_PROJECT",
    "HTTP_X_SERVICE_USER_ID",
    "HTTP_X_SERVICE_USER_NAME",
    "HTTP_X_SERVICE_USER_DOMAIN_ID",
    "HTTP_X_SERVICE_USER_DOMAIN_NAME",
    "HTTP_X_SERVICE_PROJECT_ID",
    "HTTP_X_SERVICE_PROJECT_NAME",
    "HTTP_X_SERVICE_PROJECT_DOMAIN_ID",
    "HTTP_X_SERVICE_PROJECT_DOMAIN_NAME",
)
"""Where the caller's identity travels; removed from client requests, and
the whole of what a policy decision depends on."""


WATCHED = {("POST", "/v1/ironic/inspections")}
"""(method, path) whose unauthenticated calls are logged: a push of
Ironic's inspections without credentials is a misconfigured hook or a
forgery, and either is worth a line."""


def _route(environ: dict[str, Any]) -> tuple[str, str]:
    path = (environ.get("PATH_INFO") or "/").rstrip("/") or "/"
    return environ.get("REQUEST_METHOD", "GET"), path


def is_public(environ: dict[str, Any]) -> bool:
    return _route(environ) in PUBLIC


_IDENTITY_KEYS = frozenset(IDENTITY_HEADERS)


def _clean(environ: dict[str, Any]) -> None:
    # most requests carry none: one pass over the environment's keys
    # instead of a removal per identity header
    if not _IDENTITY_KEYS.isdisjoint(environ):
        for key in _IDENTITY_KEYS.intersection(environ):
            del environ[key]


def _admin(environ: dict[str, Any], user: str) -> None:
    environ.update(
        {
            "HTTP_X_IDENTITY_STATUS": "Confirmed",
            "HTTP_X_ROLES": "admin,reader",
            "HTTP_X_USER_NAME": user,
            "HTTP_X_USER_ID": user,
            "HTTP_X_SYSTEM_SCOPE": "all",
        }
    )


def _note_refusal(environ: dict[str, Any]) -> None:
    method, path = _route(environ)
    if (method, path) in WATCHED:
        LOG.warning(
            "Refused %s %s from %s: no valid credentials",
            method,
            path,
            environ.get("REMOTE_ADDR") or "an unknown address",
        )


def unauthorized(
    start_response: Callable[..., Any], message: str, challenge: str | None = None
) -> list[bytes]:
    body = json.dumps({"error": {"message": message}}).encode()
    headers = [
        ("Content-Type", "application/json"),
        ("Content-Length", str(len(body))),
        *versions.response_headers(None).items(),
    ]
    if challenge:
        headers.append(("WWW-Authenticate", challenge))
    start_response("401 Unauthorized", headers)
    return [body]


class NoAuth:
    """Everyone is an admin (``auth_strategy = noauth``)."""

    def __init__(self, app: WSGIApp) -> None:
        self._app = app

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        _clean(environ)
        _admin(environ, "noauth")
        return self._app(environ, start_response)


class HttpBasic:
    """``auth_strategy = http_basic``: users of an htpasswd file, all admins."""

    CHALLENGE = 'Basic realm="ironic-inspector"'

    def __init__(self, app: WSGIApp, path: str) -> None:
        self._app = app
        self.users = Htpasswd(path, "[DEFAULT]http_basic_auth_user_file")

    def _user(self, environ: dict[str, Any]) -> str | None:
        return authenticated_user(environ, self.users)

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        _clean(environ)
        user = self._user(environ)
        if user is not None:
            _admin(environ, user)
        elif not is_public(environ):
            _note_refusal(environ)
            return unauthorized(
                start_response,
                "Authentication required: send valid HTTP basic credentials",
                self.CHALLENGE,
            )
        return self._app(environ, start_response)


class KeystoneGate:
    """Behind keystonemiddleware (which validates tokens but lets every
    request through): 401 for non-public requests without a valid token."""

    def __init__(self, app: WSGIApp) -> None:
        self._app = app

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        if environ.get("HTTP_X_IDENTITY_STATUS") != "Confirmed" and not is_public(
            environ
        ):
            _note_refusal(environ)
            return unauthorized(
                start_response,
                "Authentication required: send a valid Keystone token in X-Auth-Token",
                "Keystone uri='keystone'",
            )
        return self._app(environ, start_response)


# The /fleet pages in a browser under ``auth_strategy = keystone``: the
# users of ``[fleet_page]user_file`` (HTTP basic, which a browser asks for
# and sends by itself) may read the pages, and nothing else, with the
# roles of ``[fleet_page]roles`` in the API's policy.
#
# The layer sits behind keystonemiddleware (which has removed any identity
# header the client sent and validated any token) and before the gate
# that refuses requests without a valid token. A request with a valid
# token passes as it came. A GET or HEAD of a page (or of the
# introspection status a node's page links to) without one is
# authenticated here: valid credentials give it the identity of a user
# with those roles, which the policy check of the endpoint then judges as
# it judges a token's (a ``policy.yaml`` that denies ``reader`` the fleet
# denies the page user too); anything else is a 401 that makes the
# browser ask for credentials. Other methods and paths are left to the
# gate: a page user can never act, nor read what the pages do not show.

PAGE_PATHS = re.compile(r"^/fleet(/.*)?$|^/v1/introspection/[^/]+/?$")
"""The paths a page user may read: the pages, and the introspection
status a node's page links to."""
READS = frozenset({"GET", "HEAD"})
CHALLENGE = 'Basic realm="ironic-inspector fleet pages"'


def is_page(environ: dict[str, Any]) -> bool:
    """Whether the request reads a page (or the status a page links to)."""
    return environ.get("REQUEST_METHOD", "GET") in READS and bool(
        PAGE_PATHS.match(environ.get("PATH_INFO") or "/")
    )


class PageUsers:
    """Authenticates the page users' reads (see the comment above)."""

    def __init__(self, app: WSGIApp, path: str, roles: list[str]) -> None:
        self._app = app
        self.users = Htpasswd(path, "[fleet_page]user_file")
        self.roles = ",".join(roles)

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        if environ.get("HTTP_X_IDENTITY_STATUS") == "Confirmed":
            return self._app(environ, start_response)  # a valid token
        if not is_page(environ):
            return self._app(environ, start_response)  # the gate decides
        user = authenticated_user(environ, self.users)
        if user is None:
            return unauthorized(
                start_response,
                "Authentication required: the fleet pages take the credentials "
                "of a [fleet_page]user_file user, the API a Keystone token in "
                "X-Auth-Token",
                CHALLENGE,
            )
        environ.update(
            {
                "HTTP_X_IDENTITY_STATUS": "Confirmed",
                "HTTP_X_ROLES": self.roles,
                "HTTP_X_USER_NAME": user,
                "HTTP_X_USER_ID": f"fleet-page:{user}",
                "HTTP_X_SYSTEM_SCOPE": "all",
            }
        )
        return self._app(environ, start_response)


def page_users(app: WSGIApp, conf: cfg.ConfigOpts) -> WSGIApp:
    """``app`` behind the page users when ``[fleet_page]user_file`` is
    set (a missing or unreadable file stops the start)."""
    opts = conf.fleet_page
    if not opts.user_file:
        return app
    LOG.info(
        "The users of %s may read the /fleet pages with HTTP basic "
        "credentials, with the roles %s in the policy",
        opts.user_file,
        ", ".join(opts.roles) or "(none)",
    )
    return PageUsers(app, opts.user_file, list(opts.roles))


def wrap(app: WSGIApp, conf: cfg.ConfigOpts) -> WSGIApp:
    """``app`` behind the configured authentication."""
    strategy = conf.auth_strategy
    if strategy == "http_basic":
        return HttpBasic(app, conf.http_basic_auth_user_file)
    if strategy == "keystone":
        from keystonemiddleware import auth_token

        for group, options in auth_token.list_opts():
            conf.register_opts(options, group=group)
        ks = conf.keystone_authtoken
        if not ks.www_authenticate_uri and not ks.auth_type:
            raise exceptions.ConfigError(
                "Invalid configuration: auth_strategy = keystone needs "
                "[keystone_authtoken]www_authenticate_uri (the public Keystone "
                "URL clients authenticate against) and the service's own "
                "credentials (auth_type, auth_url, username, ...)"
            )
        return auth_token.AuthProtocol(
            page_users(KeystoneGate(app), conf),
            {"oslo_config_config": conf, "delay_auth_decision": True},
        )
    LOG.warning(
        "API authentication is DISABLED ([DEFAULT]auth_strategy = noauth): "
        "anyone who can reach the API can start, abort and read "
        "introspections and change rules. Use keystone or http_basic "
        "outside a trusted network."
    )
    return NoAuth(app)
