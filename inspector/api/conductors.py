"""Conductors (microversion 1.19): GET /v1/conductors[/<host>], PATCH one.

Everything goes through the service group (:mod:`inspector.coordination.
service_group`), the same view ``ironic-inspector-manage conductor`` and
the API's choice of a conductor use. Below 1.19 the resource does not exist.
"""

from typing import Any

import flask

from inspector import exceptions
from inspector.api import params, urls
from inspector.coordination.service_group import ServiceGroup
from inspector.runtime import ApiRuntime

blueprint = flask.Blueprint("conductors", __name__, url_prefix="/v1/conductors")

REASON_MAX = 255


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
    body = params.json_object()
    assert body is not None
    unknown = sorted(set(body) - {"enabled", "disabled_reason"})
    if unknown:
        raise exceptions.InvalidInput(
            f"Unknown field {unknown[0]!r}: only enabled and disabled_reason "
            "can be changed"
        )
    enabled = body.get("enabled")
    if not isinstance(enabled, bool):
        raise exceptions.InvalidInput("enabled is required and must be true or false")
    reason = body.get("disabled_reason")
    if reason is not None and (not isinstance(reason, str) or len(reason) > REASON_MAX):
        raise exceptions.InvalidInput(
            f"disabled_reason must be a string of at most {REASON_MAX} characters"
        )
    if enabled and reason:
        raise exceptions.InvalidInput("disabled_reason is only for enabled = false")
    return enabled, reason


@blueprint.patch("/<host>")
def update_conductor(host: str) -> flask.Response:
    enabled, reason = _patch_body()
    view, warning = _group().set_enabled(host, enabled, reason)
    body = _with_links(view)
    if warning:
        body["warning"] = warning
    return flask.jsonify(body)
