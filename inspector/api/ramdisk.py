"""The ramdisk callback: POST /v1/continue (public)."""

import flask

from inspector.api import params, payload
from inspector.intake import ramdisk as intake_ramdisk
from inspector.runtime import ApiRuntime

blueprint = flask.Blueprint("ramdisk", __name__)


@blueprint.post("/v1/continue")
def post_continue() -> flask.Response:
    data = params.json_object()
    assert data is not None
    payload.validate(data)
    payload.redact(data)
    rt: ApiRuntime = flask.current_app.config["RUNTIME"]
    uuid = intake_ramdisk.continue_(rt, data)
    return flask.jsonify({"uuid": uuid})
