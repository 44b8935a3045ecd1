"""A node's hardware history (microversion 1.23):
``GET /v1/introspection/<node>/history`` and ``.../changes``.

Read from the database directly (:mod:`inspector.db.hardware_runs`), so
they answer in every shape without a conductor. Below 1.23 they do not
exist (404, as a newer resource).
"""

import datetime

import flask

from inspector import exceptions
from inspector.api import params, versions
from inspector.db import hardware_runs, introspections
from inspector.intake import operator
from inspector.runtime import Runtime

blueprint = flask.Blueprint("history", __name__, url_prefix="/v1/introspection")

HISTORY = next(f for f in versions.FEATURES if f.name == "introspection-history")
CHANGES = next(f for f in versions.FEATURES if f.name == "introspection-changes")


def _rt() -> Runtime:
    rt: Runtime = flask.current_app.config["RUNTIME"]
    return rt


def _iso(value: datetime.datetime) -> str:
    return value.isoformat()


def _page(rt: Runtime) -> tuple[int, str | None]:
    """``limit`` (default and maximum ``[DEFAULT]api_max_limit``) and
    ``marker`` (a run's UUID) of the query."""
    limit = params.limit(rt.conf.api_max_limit)
    marker = flask.request.args.get("marker")
    if marker is not None:
        if not operator.UUID_RE.match(marker):
            raise exceptions.InvalidInput(
                f"Invalid marker {marker[:64]!r}: expected the UUID of a run"
            )
        marker = marker.lower()
    return limit, marker


def _node(rt: Runtime, node_id: str, feature: versions.Feature) -> str:
    versions.require(feature, flask.g.api_version, flask.request.path)
    return operator.resolve(rt, node_id)


def _known(rt: Runtime, uuid: str) -> None:
    """:raises IntrospectionNotFound: ``uuid`` was never introspected (an
    empty page of a node that was is an empty list)."""
    if not hardware_runs.exists(rt.db, uuid):
        introspections.get(rt.db, uuid)


@blueprint.get("/<node_id>/history")
def get_history(node_id: str) -> flask.Response:
    rt = _rt()
    uuid = _node(rt, node_id, HISTORY)
    limit, marker = _page(rt)
    entries = hardware_runs.history(rt.db, uuid, limit=limit, marker=marker)
    if not entries and marker is None:
        _known(rt, uuid)
    return flask.jsonify(
        {
            "history": [
                {
                    "uuid": entry.uuid,
                    "started_at": _iso(entry.started_at),
                    "finished_at": _iso(entry.finished_at),
                    "state": entry.state,
                    "error": entry.error,
                    "changes": entry.changes,
                    "source": entry.source,
                    "interface": entry.interface,
                }
                for entry in entries
            ]
        }
    )


@blueprint.get("/<node_id>/changes")
def get_changes(node_id: str) -> flask.Response:
    rt = _rt()
    uuid = _node(rt, node_id, CHANGES)
    limit, marker = _page(rt)
    found, _next = hardware_runs.changes(rt.db, uuid, limit=limit, marker=marker)
    if not found and marker is None:
        _known(rt, uuid)
    return flask.jsonify({"changes": found})
