"""Introspection rules: GET/POST/DELETE /v1/rules, GET/DELETE /v1/rules/<uuid>."""

import uuid as uuid_mod
from typing import Any

import flask

from inspector import exceptions
from inspector.api import params, urls, versions
from inspector.db import rules as rules_db
from inspector.runtime import Runtime

blueprint = flask.Blueprint("rules", __name__, url_prefix="/v1/rules")

CREATED_SINCE = versions.since("rule-created-201")
"""Creating a rule answers 201 from this microversion, 200 before it."""


def _rt() -> Runtime:
    rt: Runtime = flask.current_app.config["RUNTIME"]
    return rt


def _links(rule_id: str) -> list[dict[str, str]]:
    href = f"{urls.base_url(flask.request.environ)}/v1/rules/{rule_id}"
    return [{"href": href, "rel": "self"}]


def _full(rule: dict[str, Any]) -> dict[str, Any]:
    return {**rule, "links": _links(rule["uuid"])}


def _short(rule: dict[str, Any]) -> dict[str, Any]:
    return {
        "uuid": rule["uuid"],
        "description": rule["description"],
        "scope": rule["scope"],
        "links": _links(rule["uuid"]),
    }


def _rule_id(value: str) -> str:
    try:
        return str(uuid_mod.UUID(value))
    except ValueError:
        raise exceptions.InvalidInput(f"Invalid rule UUID: {value[:64]!r}") from None


def _no_content() -> flask.Response:
    return flask.Response(status=204)


@blueprint.get("")
@blueprint.get("/")
def list_rules() -> flask.Response:
    return flask.jsonify({"rules": [_short(r) for r in rules_db.list_all(_rt().db)]})


@blueprint.post("")
@blueprint.post("/")
def create_rule() -> flask.Response:
    # the rule plugins (and the hooks some actions share) load on first use:
    # an API process that never creates a rule never imports them
    from inspector.rules import validation

    body = params.json_object()
    assert body is not None  # required
    rule = rules_db.create(_rt().db, validation.validate(body))
    response = flask.jsonify(_full(rule))
    response.status_code = 201 if flask.g.api_version >= CREATED_SINCE else 200
    return response


@blueprint.delete("")
@blueprint.delete("/")
def delete_rules() -> flask.Response:
    rules_db.delete_all(_rt().db)
    return _no_content()


@blueprint.get("/<rule_id>")
def get_rule(rule_id: str) -> flask.Response:
    return flask.jsonify(_full(rules_db.get(_rt().db, _rule_id(rule_id))))


@blueprint.delete("/<rule_id>")
def delete_rule(rule_id: str) -> flask.Response:
    rules_db.delete(_rt().db, _rule_id(rule_id))
    return _no_content()
