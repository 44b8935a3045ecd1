"""The one place exceptions become HTTP error responses.

A client's mistake (4xx) is answered with the message naming it. A failure
of the service (5xx) is answered in general terms (the exception's
``public`` message: which kind of backend failed), whoever asks: its
details (hosts, ports, users, URLs, the driver's words) go to the log, and
the answer's ``X-OpenStack-Request-Id`` finds the request's lines there.
"""

import logging

import flask
from werkzeug import exceptions as http_exceptions

from inspector import exceptions
from inspector.outages import OutageLog

LOG = logging.getLogger(__name__)

OUTAGES = "inspector.outages"
"""Where the app keeps its two outage logs: a backend outage is one line
when requests start failing and one when they work again, not one per
request."""

NOT_PROOF = ("/healthcheck", "/metrics")
"""Paths whose success says nothing about the backends requests need."""


def _outage(kind: str) -> OutageLog:
    logs: dict[str, OutageLog] = flask.current_app.extensions[OUTAGES]
    return logs[kind]


def _failed(kind: str, reason: str) -> None:
    _outage(kind).failed(f"{flask.request.method} {flask.request.path}: {reason}")


def error_response(message: str, code: int) -> flask.Response:
    response = flask.jsonify({"error": {"message": message}})
    response.status_code = code
    return response


SEE_LOG = "; the details are in the service's log"


def public_message(exc: exceptions.InspectorError) -> str:
    """What a client reads about ``exc``: its message for a 4xx, general
    terms for a 5xx."""
    return exc.message if exc.code < 500 else exc.public + SEE_LOG


def domain_error(exc: exceptions.InspectorError) -> flask.Response:
    if exc.code == 503:  # a backend is away: Ironic, etcd, the broker
        _failed("backend", str(exc))
    elif exc.code >= 500:
        LOG.error(
            "Request %s %s failed: %s", flask.request.method, flask.request.path, exc
        )
    response = error_response(public_message(exc), exc.code)
    if exc.code == 503:
        response.headers["Retry-After"] = "5"
    return response


def _http_error(exc: http_exceptions.HTTPException) -> flask.Response:
    code = exc.code or 500
    message = exc.description or exc.name
    if code >= 500:  # werkzeug's own words, general, but say it our way
        message = f"{exc.name}{SEE_LOG}"
    elif code == 413:
        message = "The request body is too large"
    elif code == 405:
        message = (
            f"Method {flask.request.method} is not allowed on {flask.request.path}"
        )
    elif code == 404:
        message = f"No resource at {flask.request.path}"
    response = error_response(message, code)
    if code == 405 and isinstance(exc, http_exceptions.MethodNotAllowed):
        response.headers["Allow"] = ", ".join(exc.valid_methods or [])
    return response


def _database_down(exc: exceptions.DatabaseUnavailable) -> flask.Response:
    """The database went away under a request: 503, like any backend."""
    _failed("database", f"the database is unreachable: {exc.reason}")
    response = error_response(public_message(exc), exc.code)
    response.headers["Retry-After"] = "5"
    return response


def _unexpected(exc: Exception) -> flask.Response:
    LOG.error(
        "Unexpected error in %s %s",
        flask.request.method,
        flask.request.path,
        exc_info=exc,
    )
    return error_response(f"Internal server error ({type(exc).__name__}){SEE_LOG}", 500)


def _recovered(response: flask.Response) -> flask.Response:
    """A success ends an outage: any answered request the database's, an
    answered action (not a read, which may need no other backend) the
    others'."""
    if response.status_code < 400 and flask.request.path not in NOT_PROOF:
        logs: dict[str, OutageLog] = flask.current_app.extensions[OUTAGES]
        if logs["database"].failing:
            logs["database"].ok()
        if logs["backend"].failing and flask.request.method not in ("GET", "HEAD"):
            logs["backend"].ok()
    return response


def register(app: flask.Flask) -> None:
    app.extensions[OUTAGES] = {
        "database": OutageLog(LOG, "Answering requests that need the database"),
        "backend": OutageLog(LOG, "Answering requests that need a backend"),
    }
    app.after_request(_recovered)
    app.register_error_handler(exceptions.InspectorError, domain_error)
    app.register_error_handler(exceptions.DatabaseUnavailable, _database_down)
    app.register_error_handler(http_exceptions.HTTPException, _http_error)
    app.register_error_handler(Exception, _unexpected)
