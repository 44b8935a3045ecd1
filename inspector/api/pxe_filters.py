"""PXE filters (microversion 1.21): GET /v1/pxe-filters.

Every filter (``ironic-inspector-pxe-filter`` next to each dnsmasq in split
mode, the standalone process's own) reports to the database every few
seconds; this view shows what each last said and whether it is healthy:
reporting, its dnsmasq started, not failing closed.
"""

import flask

from inspector.db import pxe
from inspector.pxe_filter.report import view
from inspector.runtime import Runtime

blueprint = flask.Blueprint("pxe_filters", __name__, url_prefix="/v1/pxe-filters")


@blueprint.get("")
@blueprint.get("/")
def list_pxe_filters() -> flask.Response:
    rt: Runtime = flask.current_app.config["RUNTIME"]
    return flask.jsonify({"pxe_filters": [view(r) for r in pxe.filters(rt.db)]})
