"""Conductors (microversion 1.19): GET /v1/conductors[/<host>], PATCH one.

Everything goes through the service group (:mod:`inspector.coordination.
service_group`), the same view ``ironic-inspector-manage conductor`` and
the API's choice of a conductor use. Below 1.19 the resource does not exist.
"""

from typing import Any

import flask

from inspector.api import params, schemas, urls
from inspector.coordination.service_group import ServiceGroup
from inspector.runtime import ApiRuntime

blueprint = flask.Blueprint("conductors", __name__, url_prefix="/v1/conductors")


def _group() -> ServiceGroup:
    rt: ApiRuntime = flask.current_app.config["RUNTIME"]
    return rt.conductors


def _with_links(view: dict[str, Any]) -> dict[str, Any]:
    href = f"{urls.base_url(flask.request.environ)}/v1/conductors/{view['hostname']}"
    return {**view, "links": [{"href": href, "rel": "self"}]}


@blueprint.get("")
@blueprint.get("/")
def list_conductors() -> flask.Response:
    views = [_with_links(v) for v in _group().conductors()]
    return flask.jsonify({"conductors": views})


@blueprint.get("/<host>")
def get_conductor(host: str) -> flask.Response:
    return flask.jsonify(_with_links(_group().get(host)))


def _patch_body() -> tuple[bool, str | None]:
    body = params.body(schemas.CONDUCTOR_PATCH)
    return body["enabled"], body.get("disabled_reason")


@blueprint.patch("/<host>")
def update_conductor(host: str) -> flask.Response:
    enabled, reason = _patch_body()
    view, warning = _group().set_enabled(host, enabled, reason)
    body = _with_links(view)
    if warning:
        body["warning"] = warning
    return flask.jsonify(body)
