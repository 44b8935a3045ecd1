"""Version discovery: GET / and GET /v1 (public)."""

import flask

from inspector.api import urls, versions

blueprint = flask.Blueprint("root", __name__)


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
    found = versions.resources(flask.g.api_version)
    return flask.jsonify(
        {"resources": [{"name": f.name, "links": [_link(f.path)]} for f in found]}
    )
