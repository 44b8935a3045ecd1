"""Each request's own context: its id, its caller, and the log lines it writes.

oslo.log reads the current thread's oslo.context ``RequestContext`` for the
``[%(global_request_id)s %(request_id)s %(user_identity)s]`` part of a log
line. A context left on a server thread by an earlier request would put that
request's id and user on the next one's lines, so every request starts with
a fresh context and the thread's is cleared when the answer is handed back:

- :class:`RequestIds` (outermost) gives the request a new ``req-<uuid>``,
  takes the caller's ``X-OpenStack-Request-ID`` as the global request id
  when it is a valid ``req-<uuid>`` (oslo.middleware's convention), sets an
  anonymous context, answers with ``X-OpenStack-Request-Id`` and, with
  debug logging, writes one line per request;
- :class:`Identity` (behind authentication) replaces it with the caller's
  identity: user, project, domains and roles, as the policy check sees them.
"""

import functools
import logging
import re
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from oslo_context import context

LOG = logging.getLogger(__name__)

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

HEADER = "X-OpenStack-Request-Id"
"""The response header naming the request's id (as Ironic's)."""

INBOUND = "HTTP_X_OPENSTACK_REQUEST_ID"
"""The caller's global request id (the same header name, sent by a client
or another service)."""

ENV_REQUEST_ID = "openstack.request_id"
ENV_GLOBAL_ID = "openstack.global_request_id"
ENV_CONTEXT = "inspector.context"
"""Where the request's context is kept in the WSGI environment (the policy
check reads it)."""

_GLOBAL_ID = re.compile(
    r"req-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}"
)
"""What oslo.middleware accepts as a global request id; anything else is
ignored (it is written into logs, so it must not carry arbitrary text)."""


def new_request_id() -> str:
    """``req-<uuid4>``, as oslo.context makes them."""
    return f"req-{uuid.uuid4()}"


_CONTROL = {c: f"\\x{c:02x}" for c in range(32)}
"""Control characters, escaped where a client's text is logged."""


class _NoRequest(context.RequestContext):
    """The thread's context between requests. oslo.context has no call to
    forget a thread's context; oslo.log treats a false one as none (its
    lines then use ``logging_default_format_string``)."""

    def __bool__(self) -> bool:
        return False


@functools.cache
def _no_request() -> _NoRequest:
    return _NoRequest(request_id="-", overwrite=False)


def clear() -> None:
    """Forget this thread's context: what the thread logs until its next
    request is nobody's."""
    _no_request().update_store()


def current(environ: dict[str, Any]) -> "RequestContext | None":
    """The request's context, once :class:`RequestIds` has run, with the
    caller loaded."""
    found: RequestContext | None = environ.get(ENV_CONTEXT)
    if found is not None:
        found.load()
    return found


class RequestIds:
    """A fresh id and context per request; the response header names it."""

    def __init__(self, app: WSGIApp) -> None:
        self._app = app

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        request_id = new_request_id()
        incoming = environ.get(INBOUND)
        # fullmatch: a trailing newline must not pass (``$`` lets it)
        global_id = incoming if incoming and _GLOBAL_ID.fullmatch(incoming) else None
        environ[ENV_REQUEST_ID] = request_id
        if global_id is not None:
            environ[ENV_GLOBAL_ID] = global_id
        # stored as the thread's current context by its constructor
        environ[ENV_CONTEXT] = RequestContext(
            request_id=request_id, global_request_id=global_id
        )

        def start(status: str, headers: list[tuple[str, str]], *exc_info: Any) -> Any:
            if LOG.isEnabledFor(logging.DEBUG):
                LOG.debug(
                    "%s %s answered %s",
                    environ.get("REQUEST_METHOD"),
                    # the decoded path: a %0A must not start a forged line
                    (environ.get("PATH_INFO") or "").translate(_CONTROL),
                    status.split(" ", 1)[0],
                )
            return start_response(status, [*headers, (HEADER, request_id)], *exc_info)

        try:
            return self._app(environ, start)
        finally:
            clear()


class RequestContext(context.RequestContext):
    """oslo.context's, reading the caller from the WSGI environment when
    first asked (a log line, a policy decision), not on every request."""

    _caller: dict[str, Any] | None = None

    def identify(self, environ: dict[str, Any]) -> None:
        """The caller is now known: authentication left it in ``environ``."""
        self._caller = environ

    def load(self) -> None:
        environ, self._caller = self._caller, None
        if environ is not None:
            fill(self, environ)

    def to_dict(self) -> dict[str, Any]:
        self.load()
        return super().to_dict()

    def to_policy_values(self) -> Any:
        self.load()
        return super().to_policy_values()


class Identity:
    """Tells the request's context who the caller is.

    Runs behind the authentication layer, which leaves the identity in the
    environment the way keystonemiddleware does (read as oslo.context's
    ``from_environ`` reads it, without the tokens: nothing here needs them,
    and a context is written into logs). Until then the context is
    anonymous: identity headers a client sent are not believed.
    """

    def __init__(self, app: WSGIApp) -> None:
        self._app = app

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        if environ.get("HTTP_X_IDENTITY_STATUS") == "Confirmed":
            ctx = environ.get(ENV_CONTEXT)
            if ctx is None:  # not behind RequestIds (a test's own stack)
                ctx = environ[ENV_CONTEXT] = RequestContext()
            ctx.identify(environ)
        return self._app(environ, start_response)


_IDENTITY = (
    ("user_id", ("HTTP_X_USER_ID", "HTTP_X_USER")),
    ("user_name", ("HTTP_X_USER_NAME",)),
    ("user_domain_id", ("HTTP_X_USER_DOMAIN_ID",)),
    ("user_domain_name", ("HTTP_X_USER_DOMAIN_NAME",)),
    ("project_id", ("HTTP_X_PROJECT_ID", "HTTP_X_TENANT_ID", "HTTP_X_TENANT")),
    ("project_name", ("HTTP_X_PROJECT_NAME", "HTTP_X_TENANT_NAME")),
    ("project_domain_id", ("HTTP_X_PROJECT_DOMAIN_ID",)),
    ("project_domain_name", ("HTTP_X_PROJECT_DOMAIN_NAME",)),
    ("domain_id", ("HTTP_X_DOMAIN_ID",)),
    ("domain_name", ("HTTP_X_DOMAIN_NAME",)),
    ("system_scope", ("HTTP_OPENSTACK_SYSTEM_SCOPE",)),
    ("service_user_id", ("HTTP_X_SERVICE_USER_ID",)),
    ("service_user_name", ("HTTP_X_SERVICE_USER_NAME",)),
    ("service_project_id", ("HTTP_X_SERVICE_PROJECT_ID",)),
    ("service_project_name", ("HTTP_X_SERVICE_PROJECT_NAME",)),
)
"""Context attribute <- the first environment key present (oslo.context's
``from_environ`` mapping, without the tokens)."""


def _roles(value: str | None) -> list[str]:
    return [r.strip() for r in value.split(",")] if value else []


def fill(ctx: context.RequestContext, environ: dict[str, Any]) -> None:
    """Copy the caller's identity from ``environ`` into ``ctx``."""
    for attribute, keys in _IDENTITY:
        for key in keys:
            if key in environ:
                setattr(ctx, attribute, environ[key])
                break
    ctx.roles = _roles(environ.get("HTTP_X_ROLES", environ.get("HTTP_X_ROLE")))
    ctx.service_roles = _roles(environ.get("HTTP_X_SERVICE_ROLES"))
    admin_project = environ.get("HTTP_X_IS_ADMIN_PROJECT", "true")
    ctx.is_admin_project = admin_project.lower() == "true"
