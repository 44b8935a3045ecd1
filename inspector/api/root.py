"""Version discovery: GET / and GET /v1 (public)."""

import flask

from inspector.api import urls, versions

blueprint = flask.Blueprint("root", __name__)

RESOURCES = ("introspection", "continue", "rules")
NEWER_RESOURCES = {"conductors": (1, 19)}
"""Resources of our own microversions: listed from their version on."""


def _link(path: str) -> dict[str, str]:
    return {"href": urls.base_url(flask.request.environ) + path, "rel": "self"}


@blueprint.get("/")
def get_versions() -> flask.Response:
    return flask.jsonify(
        {
            "versions": [
                {
                    "id": versions.format_version(versions.MAXIMUM),
                    "status": "CURRENT",
                    "links": [_link("/v1")],
                }
            ]
        }
    )


@blueprint.get("/v1/openapi.json")
def get_openapi() -> flask.Response:
    from inspector.api import openapi

    return flask.jsonify(openapi.document())


@blueprint.get("/v1")
@blueprint.get("/v1/")
def get_resources() -> flask.Response:
    names = list(RESOURCES) + [
        name for name, since in NEWER_RESOURCES.items() if flask.g.api_version >= since
    ]
    return flask.jsonify(
        {"resources": [{"name": n, "links": [_link(f"/v1/{n}")]} for n in names]}
    )
