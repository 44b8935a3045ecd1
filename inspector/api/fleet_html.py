"""The fleet page's HTML answers: a page rendered with its relative way
back to the service's root (so every link works behind a path prefix),
the headers that keep it inert (a Content-Security-Policy that lets
nothing run or load) and a client's mistake as a page that says it."""

from typing import Any

import flask

from inspector import exceptions
from inspector.api import errors
from inspector.runtime import Runtime

CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'"
"""Nothing on the page runs or loads anything; its forms (the search and
the filters) go to the service itself."""


def rt() -> Runtime:
    found: Runtime = flask.current_app.config["RUNTIME"]
    return found


def up() -> str:
    """The relative path from this page to the service's root: ``""``
    from ``/fleet``, ``../`` from ``/fleet/nodes``, ``../../`` from a
    node's page (one more after a trailing slash). Every link is written
    from it, so a proxy that serves the service under ``/inspector/``
    needs nothing from us."""
    return "../" * (flask.request.path.count("/") - 1)


def render(template: str, **context: Any) -> str:
    return flask.render_template(template, up=up(), **context)


def html(text: str, status: int = 200) -> flask.Response:
    response = flask.make_response(text, status)
    response.headers["Content-Type"] = "text/html; charset=utf-8"
    response.headers["Cache-Control"] = "no-store"
    response.headers["Content-Security-Policy"] = CSP
    return response


def page(template: str, **context: Any) -> flask.Response:
    return html(render(template, **context))


def redirect(location: str) -> flask.Response:
    """A 303 to ``location``, relative as written (a browser resolves it
    against the page it asked for)."""
    response = flask.make_response("", 303)
    response.headers["Location"] = location
    response.autocorrect_location_header = False
    return response


def error_page(exc: exceptions.InspectorError) -> flask.Response:
    """A client's mistake on the page (an unknown fact, a bad page
    number, an unknown node) as a page saying it, with its status; a
    failure of the service goes to the API's one handler."""
    if exc.code >= 500:
        return errors.domain_error(exc)
    text = render("fleet_error.html", code=exc.code, message=errors.public_message(exc))
    return html(text, exc.code)
