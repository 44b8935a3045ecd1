"""The request bodies and query parameters declared once: compiled once,
judged in the declared order with the API's messages, and shown by the
OpenAPI document as the views use them."""

import threading
import time
from typing import Any

import jsonschema
import pytest

from inspector import exceptions
from inspector.api import openapi, schemas
from inspector.rules import validation
from tests.unit.test_imports import API_IMPORTS, loaded_by

STRUCTURE = {"type", "properties", "required", "additionalProperties", "if"}
"""Root keywords that need no message of their own (``if`` never fails:
its ``then`` does)."""


@pytest.mark.parametrize("name", sorted(schemas.BODIES))
def test_every_body_is_a_valid_schema_with_a_message_for_each_failure(
    name: str,
) -> None:
    body = schemas.BODIES[name]
    jsonschema.Draft202012Validator.check_schema(body.schema)
    properties = set(body.schema["properties"])
    roots = set(body.schema) - STRUCTURE
    items = {f"{p}[]" for p in properties}
    assert set(body.messages) <= properties | roots | items | {"unknown"}
    assert properties | roots <= set(body.messages)
    closed = body.schema.get("additionalProperties") is False
    assert ("unknown" in body.messages) == closed


def _counting(monkeypatch: pytest.MonkeyPatch, slow: float = 0) -> list[Any]:
    """The root schemas compiled from now on (jsonschema makes validators
    of subschemas too, as it descends: those are not compilations), each
    taking ``slow`` seconds more."""
    built: list[Any] = []
    real = jsonschema.Draft202012Validator

    def compile_root(schema: Any, *args: Any, **kwargs: Any) -> Any:
        built.append(schema)
        time.sleep(slow)  # long enough for the other threads to arrive
        return real(schema, *args, **kwargs)

    compile_root.check_schema = real.check_schema  # type: ignore[attr-defined]
    monkeypatch.setattr(jsonschema, "Draft202012Validator", compile_root)
    return built


def test_a_body_is_compiled_once(monkeypatch: pytest.MonkeyPatch) -> None:
    built = _counting(monkeypatch)
    body = schemas.Body(
        dict(schemas.CONDUCTOR_PATCH.schema), dict(schemas.CONDUCTOR_PATCH.messages)
    )
    assert built == []  # not at declaration: on first use
    for _ in range(3):
        body.check({"enabled": True})
        with pytest.raises(exceptions.InvalidInput):
            body.check({})
    assert len(built) == 1
    assert body.validator() is body.validator()


def test_threads_using_a_body_first_compile_it_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built = _counting(monkeypatch, slow=0.05)
    body = schemas.Body(
        dict(schemas.RULE_TEST.schema), dict(schemas.RULE_TEST.messages)
    )
    start = threading.Barrier(8)

    def use() -> None:
        start.wait()
        body.check({"data": {}})

    threads = [threading.Thread(target=use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(built) == 1


def test_the_api_process_does_not_import_jsonschema_to_start() -> None:
    loaded = loaded_by(API_IMPORTS)
    assert "inspector.api.schemas" in loaded
    assert "jsonschema" not in loaded


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({}, "enabled is required and must be true or false"),
        ({"enabled": "false"}, "enabled is required and must be true or false"),
        ({"enabled": 1}, "enabled is required and must be true or false"),
        (
            {"enabled": False, "disabled_reason": 5},
            "disabled_reason must be a string of at most 255 characters",
        ),
        (
            {"enabled": False, "disabled_reason": "x" * 256},
            "disabled_reason must be a string of at most 255 characters",
        ),
        (
            {"enabled": True, "disabled_reason": "x"},
            "disabled_reason is only for enabled = false",
        ),
        (  # the first unknown field by name, before anything else
            {"enabled": "no", "zone": 1, "colour": "red"},
            "Unknown field 'colour': only enabled and disabled_reason can be changed",
        ),
    ],
)
def test_conductor_patch_messages(given: dict[str, Any], message: str) -> None:
    with pytest.raises(exceptions.InvalidInput) as caught:
        schemas.CONDUCTOR_PATCH.check(given)
    assert caught.value.message == message


@pytest.mark.parametrize(
    "given",
    [
        {"enabled": True},
        {"enabled": True, "disabled_reason": ""},
        {"enabled": True, "disabled_reason": None},
        {"enabled": False, "disabled_reason": "x" * 255},
    ],
)
def test_conductor_patch_accepted(given: dict[str, Any]) -> None:
    schemas.CONDUCTOR_PATCH.check(given)


NEED_DATA = (
    "data: post the introspection data, or give node_uuid to use the node's stored data"
)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({}, NEED_DATA),
        ({"data": None, "node_uuid": None}, NEED_DATA),
        ({"data": []}, "data: must be a JSON object"),
        ({"data": {}, "node": "n"}, "node: must be a JSON object"),
        ({"data": {}, "ports": {}}, "ports: must be a list of port objects"),
        ({"data": {}, "ports": [{}, 1]}, "ports: must be a list of port objects"),
        ({"node_uuid": ""}, "node_uuid: must be a node's UUID or name"),
        ({"node_uuid": 7}, "node_uuid: must be a node's UUID or name"),
        (
            {"data": {}, "rules": []},
            "rules: must be a non-empty list of rule UUIDs or rule bodies",
        ),
        (
            {"data": {}, "rules": ["a", {}, 5, None]},
            "rules[2]: must be a rule UUID or a rule body",
        ),
        (
            {"data": {}, "colour": 1, "bad": 2},
            "bad: unknown field; allowed: node_uuid, data, node, ports, rules",
        ),
        ({"data": 1, "rules": 1}, "data: must be a JSON object"),  # in order
        ({"rules": 1}, NEED_DATA),
    ],
)
def test_rule_test_messages(given: dict[str, Any], message: str) -> None:
    with pytest.raises(exceptions.InvalidInput) as caught:
        schemas.RULE_TEST.check(given)
    assert caught.value.message == message


@pytest.mark.parametrize(
    "given",
    [
        {"data": {}},
        {"node_uuid": "node-1"},
        {"node_uuid": "node-1", "data": None, "ports": None, "rules": None},
        {"data": {}, "node": {}, "ports": [{}], "rules": ["uuid", {"actions": []}]},
    ],
)
def test_rule_test_accepted(given: dict[str, Any]) -> None:
    schemas.RULE_TEST.check(given)


def test_a_key_without_a_message_still_answers_400() -> None:
    body = schemas.Body({"type": "object", "properties": {"a": {"type": "string"}}}, {})
    with pytest.raises(exceptions.InvalidInput, match="^a: 1 is not of type"):
        body.check({"a": 1})


def _operation(document: dict[str, Any], path: str, method: str) -> Any:
    return document["paths"][path][method]


def _body_schema(operation: Any) -> Any:
    return operation["requestBody"]["content"]["application/json"]["schema"]


def test_the_document_shows_the_bodies_the_views_check() -> None:
    document = openapi.document()
    patch = _operation(document, "/v1/conductors/{host}", "patch")
    assert _body_schema(patch) == schemas.CONDUCTOR_PATCH.schema
    assert _body_schema(patch)["additionalProperties"] is False  # as the server
    trial = _operation(document, "/v1/rules/test", "post")
    assert _body_schema(trial) == schemas.RULE_TEST.schema
    create = _operation(document, "/v1/rules", "post")
    assert _body_schema(create) == validation.SCHEMA


@pytest.mark.parametrize(
    ("path", "method", "declared"),
    [
        ("/v1/introspection", "get", schemas.INTROSPECTION_LIST),
        ("/v1/introspection/{node_id}", "post", schemas.START),
        ("/v1/introspection/{node_id}/history", "get", schemas.RUN_PAGE),
        ("/v1/introspection/{node_id}/changes", "get", schemas.RUN_PAGE),
        ("/v1/inventory", "get", schemas.INVENTORY_LIST),
        ("/v1/inventory/summary", "get", schemas.INVENTORY_SUMMARY),
    ],
)
def test_the_document_shows_the_declared_query_parameters(
    path: str, method: str, declared: tuple[schemas.Query, ...]
) -> None:
    operation = _operation(openapi.document(), path, method)
    shown = [p for p in operation["parameters"] if p["in"] == "query"]
    assert shown == [q.parameter() for q in declared]


def test_every_query_parameter_of_the_document_is_declared() -> None:
    declared = [
        q.parameter()
        for group in (
            schemas.INTROSPECTION_LIST,
            schemas.START,
            schemas.RUN_PAGE,
            schemas.INVENTORY_LIST,
            schemas.INVENTORY_SUMMARY,
        )
        for q in group
    ]
    for operations in openapi.document()["paths"].values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "query":
                    assert parameter in declared, parameter


def test_a_reader_of_the_document_cannot_change_the_schemas() -> None:
    document = openapi.document()
    patch = _operation(document, "/v1/conductors/{host}", "patch")
    _body_schema(patch)["properties"]["colour"] = {"type": "string"}
    assert "colour" not in schemas.CONDUCTOR_PATCH.schema["properties"]


def test_the_rule_schema_names_the_fields_validation_accepts() -> None:
    with pytest.raises(exceptions.InvalidInput) as caught:
        validation.validate({"actions": [{"action": "fail"}], "colour": 1})
    allowed = ", ".join(sorted(validation.SCHEMA["properties"]))
    assert caught.value.message == (
        f"Invalid rule: colour: unknown field; allowed: {allowed}"
    )
