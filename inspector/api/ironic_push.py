"""The push of Ironic's inspection hook: POST /v1/ironic/inspections.

The hook (``ironic-push-hook/``) runs inside Ironic and sends each
inspection's inventory, plugin data and ramdisk logs. Unlike the
ramdisk's post, a push is authenticated (``[DEFAULT]auth_strategy``, then
the policy ``introspection:ironic_push``), refused under ``noauth`` unless
``[ironic_push]allow_unauthenticated``, and checked against Ironic
(:mod:`inspector.follow.push`). Its body is bounded and its data checked
and redacted as the ramdisk's is. Not a microversioned resource: the hook
is its only client.
"""

import logging
from typing import Any

import flask

from inspector import exceptions
from inspector.api import params, payload, schemas
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)

blueprint = flask.Blueprint("ironic_push", __name__)


class UnauthenticatedPush(exceptions.InspectorError):
    code = 403
    template = (
        "Pushes of Ironic's inspections must be authenticated, and this "
        "service runs with [DEFAULT]auth_strategy = noauth: use keystone or "
        "http_basic (or, on a closed network, set "
        "[ironic_push]allow_unauthenticated)"
    )


def _caller() -> str:
    """The caller's address and user, for the log."""
    environ = flask.request.environ
    user = environ.get("HTTP_X_USER_NAME") or environ.get("HTTP_X_USER_ID")
    address = flask.request.remote_addr or "an unknown address"
    return f"{address} (user {user or 'unknown'})"


def _ramdisk_data(body: dict[str, Any]) -> dict[str, Any]:
    """The push as the ramdisk's post Ironic received: the inventory and
    the plugin data's keys beside it, without logs; checked and redacted
    as a post to /v1/continue is."""
    plugin = body.get("plugin_data") or {}
    data = {k: v for k, v in plugin.items() if k not in ("inventory", "logs")}
    data["inventory"] = body["inventory"]
    payload.validate(data)
    payload.redact(data)
    return data


@blueprint.post("/v1/ironic/inspections")
def post_inspection() -> flask.Response:
    rt: Runtime = flask.current_app.config["RUNTIME"]
    caller = _caller()
    if (
        rt.conf.auth_strategy == "noauth"
        and not rt.conf.ironic_push.allow_unauthenticated
    ):
        LOG.warning(
            "Refused an unauthenticated push of Ironic's inspection from %s "
            "([DEFAULT]auth_strategy = noauth)",
            caller,
        )
        raise UnauthenticatedPush()
    body = params.body(schemas.IRONIC_PUSH)
    data = _ramdisk_data(body)
    # here, not at the top: the hardware record's modules (and the hooks'
    # LLDP decoder they use) load on the first push, not in every API process
    from inspector.follow import push as follow_push

    taken = follow_push.accept(
        rt,
        follow_push.Push(
            node_uuid=body["node_uuid"].lower(),
            started_at=body["inspection_started_at"],
            data=data,
            logs=body.get("logs"),
            caller=caller,
        ),
    )
    answer = flask.jsonify(
        {
            "node_uuid": body["node_uuid"].lower(),
            "recorded": taken.recorded,
            "run": taken.run,
            "message": taken.message,
        }
    )
    answer.status_code = 201 if taken.recorded else 200
    return answer
