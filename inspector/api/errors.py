"""The one place exceptions become HTTP error responses."""

import logging

import flask
from werkzeug import exceptions as http_exceptions

from inspector import exceptions

LOG = logging.getLogger(__name__)


def error_response(message: str, code: int) -> flask.Response:
    response = flask.jsonify({"error": {"message": message}})
    response.status_code = code
    return response


def _domain_error(exc: exceptions.InspectorError) -> flask.Response:
    if exc.code >= 500:
        LOG.error(
            "Request %s %s failed: %s", flask.request.method, flask.request.path, exc
        )
    response = error_response(exc.message, exc.code)
    if exc.code == 503:
        response.headers["Retry-After"] = "5"
    return response


def _http_error(exc: http_exceptions.HTTPException) -> flask.Response:
    code = exc.code or 500
    message = exc.description or exc.name
    if code == 413:
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
    LOG.error(
        "Request %s %s: the database is unreachable: %s",
        flask.request.method,
        flask.request.path,
        exc.reason,
    )
    response = error_response(exc.message, exc.code)
    response.headers["Retry-After"] = "5"
    return response


def _unexpected(exc: Exception) -> flask.Response:
    LOG.error(
        "Unexpected error in %s %s",
        flask.request.method,
        flask.request.path,
        exc_info=exc,
    )
    return error_response(
        f"Internal server error ({type(exc).__name__}); see the service log", 500
    )


def register(app: flask.Flask) -> None:
    app.register_error_handler(exceptions.InspectorError, _domain_error)
    app.register_error_handler(exceptions.DatabaseUnavailable, _database_down)
    app.register_error_handler(http_exceptions.HTTPException, _http_error)
    app.register_error_handler(Exception, _unexpected)
