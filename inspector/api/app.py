"""The Flask application factory of the v1 API."""

from collections.abc import Callable, Iterable
from typing import Any

import flask
from oslo_middleware import cors, http_proxy_to_wsgi

from inspector.api import (
    access,
    auth,
    conductors,
    errors,
    fleet,
    fleet_page,
    history,
    introspection,
    ironic_push,
    payload,
    pxe_filters,
    ramdisk,
    request_context,
    root,
    rules,
    versions,
)
from inspector.api.status_fast_path import StatusFastPath
from inspector.runtime import ApiRuntime


def _authorize() -> None:
    """The policy rule of the matched endpoint; unmatched paths 404 later."""
    endpoint = flask.request.endpoint
    if endpoint is None or endpoint == "static":
        return
    rule = access.ENDPOINT_RULES.get(endpoint)
    if rule is None:  # fail closed: a route without a rule is a bug
        raise access.Forbidden(rule=endpoint, roles="(no policy rule)")
    rt: ApiRuntime = flask.current_app.config["RUNTIME"]
    access.check(rt.conf, rule, flask.request.environ)


def _negotiate_version() -> None:
    flask.g.api_version = None
    flask.g.api_version = versions.negotiate(
        flask.request.headers.get(versions.HEADER),
        flask.request.headers.get(versions.STANDARD_HEADER),
    )
    newer = flask.current_app.extensions[NEWER].get(flask.request.blueprint)
    if newer is not None:  # a resource newer than the version asked for
        versions.require(newer, flask.g.api_version, flask.request.path)


NEWER = "inspector.newer_resources"
"""Where the app keeps its blueprints of resources newer than 1.0, each
with its entry of :data:`versions.FEATURES`."""


def newer_resources(app: flask.Flask) -> dict[str, versions.Feature]:
    """Blueprint name -> the versioned resource it serves (by path)."""
    found = {}
    for name, blueprint in app.blueprints.items():
        for feature in versions.RESOURCES:
            if (
                blueprint.url_prefix == feature.path
                and feature.since > versions.MINIMUM
            ):
                found[name] = feature
    return found


def _add_version_headers(response: flask.Response) -> flask.Response:
    # extend() appends without the per-header search set() does: this runs on
    # every response, and the hot status GET is a few hundred microseconds
    version = getattr(flask.g, "api_version", None)
    response.headers.extend(versions.response_headers(version))
    response.headers.add("Vary", versions.VARY)
    return response


class OperatorPaths:
    """Sends /healthcheck and /metrics to their own WSGI applications.

    They are not part of the v1 API: no version negotiation, no JSON errors,
    answered before Flask sees the request.
    """

    def __init__(self, app: Callable[..., Any], routes: dict[str, Callable[..., Any]]):
        self._app = app
        self._routes = routes

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        path = environ.get("PATH_INFO") or "/"
        target = self._routes.get(path.rstrip("/") or "/", self._app)
        result: Iterable[bytes] = target(environ, start_response)
        return result


def _operator_paths(app: Callable[..., Any], rt: ApiRuntime) -> Callable[..., Any]:
    routes: dict[str, Callable[..., Any]] = {}
    if rt.conf.healthcheck.enabled:
        from inspector.api import health

        routes[health.PATH] = health.build(rt, app)
    if rt.conf.metrics.enabled:
        from inspector.api import metrics

        routes["/metrics"] = metrics.exposition_app(rt)
    return OperatorPaths(app, routes) if routes else app


def create_app(rt: ApiRuntime) -> flask.Flask:
    """Build the API application around a process's :class:`Runtime`."""
    app = flask.Flask("inspector.api")
    app.config["RUNTIME"] = rt
    app.config["MAX_CONTENT_LENGTH"] = rt.conf.max_request_body_size
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.url_map.strict_slashes = False
    app.before_request(_negotiate_version)
    app.before_request(_authorize)
    app.after_request(_add_version_headers)
    errors.register(app)
    # compiled now, not by the first ramdisk post of each API process
    payload.compile_schema()
    for module in (root, introspection, ramdisk, rules, conductors, pxe_filters):
        app.register_blueprint(module.blueprint)
    app.register_blueprint(history.blueprint)
    app.register_blueprint(fleet.blueprint)
    app.register_blueprint(fleet_page.blueprint)
    app.register_blueprint(ironic_push.blueprint)
    app.extensions[NEWER] = newer_resources(app)
    app.wsgi_app = _operator_paths(app.wsgi_app, rt)  # type: ignore[method-assign]
    # the hot status GET skips every layer but authentication
    app.wsgi_app = StatusFastPath(app.wsgi_app, rt)  # type: ignore[method-assign]
    # the caller authentication found goes into the request's context
    app.wsgi_app = request_context.Identity(app.wsgi_app)  # type: ignore[method-assign]
    app.wsgi_app = auth.wrap(app.wsgi_app, rt.conf)  # type: ignore[method-assign,assignment]
    if rt.conf.cors.allowed_origin:
        # outside authentication: a browser's preflight carries no token
        app.wsgi_app = cors.CORS(app.wsgi_app, rt.conf)  # type: ignore[method-assign]
    if rt.conf.oslo_middleware.enable_proxy_headers_parsing:
        # outermost: every layer sees the scheme and host the client used
        app.wsgi_app = http_proxy_to_wsgi.HTTPProxyToWSGI(  # type: ignore[method-assign]
            app.wsgi_app, rt.conf
        )
    # outermost: every answer, a 401 or a CORS preflight too, names its
    # request, and every line logged meanwhile carries its id
    app.wsgi_app = request_context.RequestIds(app.wsgi_app)  # type: ignore[method-assign]
    return app
