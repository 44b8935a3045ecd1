"""The Flask application factory of the v1 API."""

import flask

from inspector.api import errors, introspection, ramdisk, root, versions
from inspector.api.status_fast_path import StatusFastPath
from inspector.runtime import Runtime

MAX_BODY_BYTES = 16 * 1024 * 1024
"""Largest accepted request body; a full inventory is well under 1 MiB."""


def _negotiate_version() -> None:
    flask.g.api_version = None
    flask.g.api_version = versions.negotiate(
        flask.request.headers.get(versions.HEADER),
        flask.request.headers.get(versions.STANDARD_HEADER),
    )



def _add_version_headers(response: flask.Response) -> flask.Response:
    # extend() appends without the per-header search set() does: this runs on
    # every response, and the hot status GET is a few hundred microseconds
    version = getattr(flask.g, "api_version", None)
    response.headers.extend(versions.response_headers(version))
    response.headers.add("Vary", versions.VARY)
    return response


def create_app(rt: Runtime) -> flask.Flask:
    """Build the API application around a process's :class:`Runtime`."""
    app = flask.Flask("inspector.api")
    app.config["RUNTIME"] = rt
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.url_map.strict_slashes = False
    app.before_request(_negotiate_version)
    app.after_request(_add_version_headers)
    errors.register(app)
    for module in (root, introspection, ramdisk):
        app.register_blueprint(module.blueprint)
    app.wsgi_app = StatusFastPath(app.wsgi_app, rt)  # type: ignore[method-assign]
    return app
