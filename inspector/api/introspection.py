"""Introspection resources: start, status, list, abort, data, reapply."""

from typing import Any

import flask

from inspector import arguments, exceptions, states
from inspector.api import params, payload, urls, versions
from inspector.api.status_body import status_body
from inspector.db import data_store, listing
from inspector.db.introspections import IntrospectionRecord
from inspector.intake import operator
from inspector.runtime import ApiRuntime

blueprint = flask.Blueprint("introspection", __name__, url_prefix="/v1/introspection")


def _rt() -> ApiRuntime:
    rt: ApiRuntime = flask.current_app.config["RUNTIME"]
    return rt


def _base_url() -> str:
    """The URL root of this request, as the client addressed the service."""
    return urls.base_url(flask.request.environ)


def _status(record: IntrospectionRecord) -> dict[str, Any]:
    return status_body(record, _base_url(), flask.g.api_version)


def _accepted() -> flask.Response:
    response = flask.jsonify({})
    response.status_code = 202
    return response


MODE_SINCE = versions.since("introspection-mode")


def _mode() -> str | None:
    """The ``mode`` query parameter (API 1.26), or None when not given."""
    if "mode" not in flask.request.args:
        return None
    if flask.g.api_version < MODE_SINCE:
        raise exceptions.InvalidInput(
            "The mode parameter needs API version "
            f"{versions.format_version(MODE_SINCE)} or newer"
        )
    mode = flask.request.args["mode"]
    if mode not in states.MODES:
        raise exceptions.InvalidInput(
            f"Invalid value for mode: {mode[:32]!r}; expected one of "
            f"{', '.join(states.MODES)}"
        )
    return mode


@blueprint.post("/<node_id>")
def start(node_id: str) -> flask.Response:
    manage_boot = True
    if "manage_boot" in flask.request.args:
        manage_boot = params.strict_bool("manage_boot", True)
    operator.start(_rt(), node_id, manage_boot, mode=_mode())
    return _accepted()


@blueprint.get("/<node_id>")
def get_status(node_id: str) -> flask.Response:
    record = operator.status(_rt(), node_id)
    return flask.jsonify(_status(record))


@blueprint.get("")
@blueprint.get("/")
def list_statuses() -> flask.Response:
    rt = _rt()
    limit = params.limit(rt.conf.api_max_limit)
    marker = flask.request.args.get("marker")
    if marker is not None:
        operator.validate_node_id(marker, names=False)
        marker = marker.lower()
    states_filter = None
    if "state" in flask.request.args:
        states_filter = arguments.names(flask.request.args["state"])
        unknown = sorted(set(states_filter) - set(states.ALL))
        if unknown:
            raise exceptions.InvalidInput(
                f"Invalid state filter {', '.join(unknown)}; valid states: "
                f"{', '.join(states.ALL)}"
            )
    records = listing.page(
        rt.db, limit=limit, marker=marker, states_filter=states_filter
    )
    return flask.jsonify({"introspection": [_status(r) for r in records]})


@blueprint.post("/<node_id>/abort")
def abort(node_id: str) -> flask.Response:
    operator.abort(_rt(), node_id)
    return _accepted()


def _data(node_id: str, processed: bool) -> flask.Response:
    rt = _rt()
    store = rt.stores.current()
    if isinstance(store, data_store.NoStore):
        store.get("", processed=processed)  # the "not configured" 404
    uuid = operator.resolve(rt, node_id)
    return flask.jsonify(store.get(uuid, processed=processed))


@blueprint.get("/<node_id>/data")
def get_data(node_id: str) -> flask.Response:
    return _data(node_id, processed=True)


@blueprint.get("/<node_id>/data/unprocessed")
def get_unprocessed_data(node_id: str) -> flask.Response:
    return _data(node_id, processed=False)


@blueprint.post("/<node_id>/data/unprocessed")
def reapply(node_id: str) -> flask.Response:
    body = params.json_object(required=False)
    if body is not None:
        payload.validate(body)
        payload.redact(body)
    operator.reapply(_rt(), node_id, body)
    return _accepted()
