"""Rules are validated when created: every bad field is named."""

from typing import Any

import pytest

from inspector import exceptions
from inspector.rules import validation

ACTION = {"action": "set-attribute", "path": "/extra/a", "value": 1}


def test_defaults_are_filled_in() -> None:
    rule = validation.validate(
        {
            "conditions": [{"op": "eq", "field": "memory_mb", "value": 1024}],
            "actions": [ACTION],
        }
    )
    assert rule["conditions"] == [
        {
            "op": "eq",
            "field": "memory_mb",
            "multiple": "any",
            "invert": False,
            "value": 1024,
        }
    ]
    assert rule["actions"] == [ACTION]
    assert rule["description"] is None and rule["scope"] is None
    assert len(rule["uuid"]) == 36


def test_given_uuid_is_normalised() -> None:
    rule = validation.validate(
        {"uuid": "9E9B2EF8-7C0B-4D47-9C6D-5D8C9D1A0B11", "actions": [ACTION]}
    )
    assert rule["uuid"] == "9e9b2ef8-7c0b-4d47-9c6d-5d8c9d1a0b11"
    assert rule["conditions"] == []


@pytest.mark.parametrize(
    "body,where",
    [
        ({"actions": []}, "actions"),
        ({}, "actions"),
        ({"actions": [ACTION], "uuid": "nope"}, "uuid"),
        ({"actions": [ACTION], "scope": "x" * 256}, "scope"),
        ({"actions": [ACTION], "scope": 5}, "scope"),
        ({"actions": [ACTION], "colour": "red"}, "colour"),
        ({"actions": [ACTION], "conditions": {}}, "conditions"),
        ({"actions": [ACTION], "conditions": ["eq"]}, "conditions[0]"),
        (
            {
                "actions": [ACTION],
                "conditions": [{"op": "like", "field": "a", "value": 1}],
            },
            "conditions[0].op",
        ),
        (
            {"actions": [ACTION], "conditions": [{"op": "eq", "value": 1}]},
            "conditions[0].field",
        ),
        (
            {
                "actions": [ACTION],
                "conditions": [{"op": "eq", "field": "a[", "value": 1}],
            },
            "conditions[0].field",
        ),
        (
            {"actions": [ACTION], "conditions": [{"op": "eq", "field": "a"}]},
            "conditions[0]",
        ),  # value is required
        (
            {
                "actions": [ACTION],
                "conditions": [
                    {"op": "eq", "field": "a", "value": 1, "multiple": "some"}
                ],
            },
            "conditions[0].multiple",
        ),
        (
            {
                "actions": [ACTION],
                "conditions": [{"op": "eq", "field": "a", "value": 1, "invert": "yes"}],
            },
            "conditions[0].invert",
        ),
        (
            {
                "actions": [ACTION],
                "conditions": [{"op": "in-net", "field": "a", "value": "10.0.0.0/33"}],
            },
            "conditions[0]",
        ),
        (
            {
                "actions": [ACTION],
                "conditions": [{"op": "matches", "field": "a", "value": "("}],
            },
            "conditions[0]",
        ),
        ({"actions": [{"action": "explode"}]}, "actions[0].action"),
        ({"actions": [{"action": "fail"}]}, "actions[0]"),
        ({"actions": [{"action": "fail", "message": ""}]}, "actions[0].message"),
        (
            {"actions": [ACTION, {"action": "set-attribute", "path": "/", "value": 1}]},
            "actions[1]",
        ),
        (
            {"actions": [{"action": "set-capability", "name": "a:b", "value": "c"}]},
            "actions[0]",
        ),
        ({"actions": [{"action": "add-trait", "name": 7}]}, "actions[0].name"),
    ],
)
def test_bad_rules_name_the_field(body: dict[str, Any], where: str) -> None:
    with pytest.raises(exceptions.InvalidInput) as caught:
        validation.validate(body)
    assert caught.value.code == 400
    assert caught.value.message.startswith(f"Invalid rule: {where}:"), (
        caught.value.message
    )


def test_every_documented_plugin_is_registered() -> None:
    assert sorted(validation.conditions()) == sorted(
        [
            "eq",
            "ne",
            "lt",
            "le",
            "gt",
            "ge",
            "in-net",
            "matches",
            "contains",
            "is-empty",
            # API 1.24 (issue 34)
            "one-of",
            "is-none",
            "is-true",
            "is-false",
        ]
    )
    assert sorted(validation.actions()) == sorted(
        [
            "fail",
            "set-attribute",
            "set-capability",
            "extend-attribute",
            "add-trait",
            "remove-trait",
            # API 1.24 (issue 34)
            "del-attribute",
            "unset-capability",
            "log",
            "set-plugin-data",
            "extend-plugin-data",
            "unset-plugin-data",
            "set-port-attribute",
            "extend-port-attribute",
            "del-port-attribute",
            "api-call",
        ]
    )
