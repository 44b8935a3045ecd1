"""Introspection rules: GET/POST/DELETE /v1/rules, GET/DELETE /v1/rules/<uuid>,
POST /v1/rules/test (1.24); the built-in rules of ``[rules]built_in_rules``
listed read-only from 1.25 (:mod:`inspector.rules.builtin`)."""

import uuid as uuid_mod
from typing import Any

import flask

from inspector import exceptions
from inspector.api import params, schemas, urls, versions
from inspector.db import rules as rules_db
from inspector.intake import operator
from inspector.runtime import Runtime

blueprint = flask.Blueprint("rules", __name__, url_prefix="/v1/rules")

CREATED_SINCE = versions.since("rule-created-201")
"""Creating a rule answers 201 from this microversion, 200 before it."""
LANGUAGE_SINCE = versions.since("rule-language")
"""Priority, sensitive, !op, loop and variables from this microversion."""
TEST_SINCE = versions.since("rules-test")
BUILT_IN_SINCE = versions.since("rules-built-in")
"""Built-in rules are listed and shown (``built_in: true``) from this
microversion; below it a client could not tell them from stored rules (and
would try to delete them, or re-create them from its listing)."""
NEW_FIELDS = ("priority", "sensitive")
INTERNAL = ("language",)
"""Kept with a rule, never answered (:data:`validation.LANGUAGE`)."""
"""The rule fields answered only from :data:`LANGUAGE_SINCE`."""


def _rt() -> Runtime:
    rt: Runtime = flask.current_app.config["RUNTIME"]
    return rt


def _links(rule_id: str) -> list[dict[str, str]]:
    href = f"{urls.base_url(flask.request.environ)}/v1/rules/{rule_id}"
    return [{"href": href, "rel": "self"}]


def _built_in() -> Any:
    from inspector.rules import builtin  # loaded at the API's start

    return builtin.current(_rt().conf)


def _flagged(rule: dict[str, Any]) -> dict[str, Any]:
    """``built_in`` answered from 1.25, never below."""
    if flask.g.api_version >= BUILT_IN_SINCE:
        return {**rule, "built_in": bool(rule.get("built_in"))}
    return {k: v for k, v in rule.items() if k != "built_in"}


def _full(rule: dict[str, Any]) -> dict[str, Any]:
    rule = _flagged(rule)
    if rule.get("sensitive"):
        from inspector.rules import masking  # only for the rules that need it

        rule = masking.masked(rule)
    hidden = (
        INTERNAL if flask.g.api_version >= LANGUAGE_SINCE else INTERNAL + NEW_FIELDS
    )
    rule = {k: v for k, v in rule.items() if k not in hidden}
    return {**rule, "links": _links(rule["uuid"])}


def _short(rule: dict[str, Any]) -> dict[str, Any]:
    short = {
        "uuid": rule["uuid"],
        "description": rule["description"],
        "scope": rule["scope"],
        "links": _links(rule["uuid"]),
    }
    if flask.g.api_version >= BUILT_IN_SINCE:
        short["built_in"] = bool(rule.get("built_in"))
    return short


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
    rules = rules_db.list_all(_rt().db)
    if flask.g.api_version >= BUILT_IN_SINCE:
        from inspector.rules import builtin

        rules = builtin.merged(rules, _built_in().rules)  # in the running order
    return flask.jsonify({"rules": [_short(r) for r in rules]})


@blueprint.post("")
@blueprint.post("/")
def create_rule() -> flask.Response:
    # the rule plugins (and the hooks some actions share) load on first use:
    # an API process that never creates a rule never imports them
    from inspector.rules import validation

    body = params.json_object()
    assert body is not None  # required
    settings = validation.RuleChecks(
        new_language=flask.g.api_version >= LANGUAGE_SINCE,
        allowed_hosts=tuple(_rt().conf.rules.api_call_allowed_hosts),
    )
    valid = validation.validate(body, settings)
    if _built_in().get(valid["uuid"]) is not None:
        raise rules_db.RuleExists(uuid=valid["uuid"])
    rule = rules_db.create(_rt().db, valid)
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
    uuid = _rule_id(rule_id)
    found = _built_in().get(uuid)
    if found is not None and flask.g.api_version >= BUILT_IN_SINCE:
        return flask.jsonify(_full(found))
    return flask.jsonify(_full(rules_db.get(_rt().db, uuid)))


@blueprint.delete("/<rule_id>")
def delete_rule(rule_id: str) -> flask.Response:
    uuid = _rule_id(rule_id)
    if _built_in().get(uuid) is not None:  # at every version: never a silent 404
        from inspector.rules import builtin

        raise builtin.BuiltInRule(uuid=uuid)
    rules_db.delete(_rt().db, uuid)
    return _no_content()


def _trial_rules(rt: Runtime, given: Any) -> list[dict[str, Any]]:
    """The rules a test runs: every enabled one, or those ``given`` (stored
    ones by UUID, new ones as bodies, validated as at creation)."""
    from inspector.rules import builtin, validation

    built_in = builtin.current(rt.conf)
    if given is None:
        return builtin.merged(rules_db.list_all(rt.db), built_in.rules)
    settings = validation.RuleChecks(
        allowed_hosts=tuple(rt.conf.rules.api_call_allowed_hosts)
    )
    found = []
    for index, item in enumerate(given):
        if isinstance(item, str):
            uuid = _rule_id(item)
            found.append(built_in.get(uuid) or rules_db.get(rt.db, uuid))
        else:  # a rule body (schemas.RULE_TEST allows nothing else)
            try:
                found.append(validation.validate(item, settings))
            except exceptions.InvalidInput as exc:
                raise exceptions.InvalidInput(
                    f"rules[{index}]: {exc.message}"
                ) from None
    return found


@blueprint.post("/test")
def test_rules() -> flask.Response:
    """Run rules on a node's stored data or a posted payload, writing
    nothing (:mod:`inspector.rules.trial`)."""
    if flask.g.api_version < TEST_SINCE:
        raise exceptions.NotFound(
            "No resource at /v1/rules/test in API version "
            f"{versions.format_version(flask.g.api_version)}: rules-test needs "
            f"version {versions.format_version(TEST_SINCE)} or newer"
        )
    from inspector.rules import runner, trial

    rt = _rt()
    body = params.body(schemas.RULE_TEST)
    data, node = body.get("data"), body.get("node")
    ports = body.get("ports") or []
    node_id = body.get("node_uuid")
    if node_id is not None:
        uuid = operator.resolve(rt, node_id)
        if node is None:
            node = rt.baremetal.get_node(uuid)
            if not ports:
                ports = rt.baremetal.list_ports(uuid)
        if data is None:
            data = rt.stores.current().get(uuid, processed=True)
    assert data is not None  # schemas.RULE_TEST: posted, or the node's
    rules = _trial_rules(rt, body.get("rules"))
    answer = trial.run(
        rules,
        data,
        node or {"properties": {}, "extra": {}},
        ports,
        runner.RunSettings.from_conf(rt.conf),
    )
    return flask.jsonify(answer)
