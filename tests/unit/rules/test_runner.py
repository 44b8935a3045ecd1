"""Running rules on a node: fields, multiple/invert, scope, formatting, actions."""

from typing import Any

import pytest

from inspector import exceptions
from inspector.hooks.base import NodeContext
from inspector.rules import runner, validation

DATA = {
    "memory_mb": 16384,
    "inventory": {
        "cpu": {"count": 8, "architecture": "x86_64"},
        "interfaces": [
            {"name": "eth0", "ipv4_address": "192.168.1.10"},
            {"name": "eth1", "ipv4_address": None},
        ],
        "system_vendor": {"manufacturer": "Dell Inc."},
    },
}


def _ctx(**properties: Any) -> NodeContext:
    node = {
        "uuid": "n1",
        "properties": {"cpus": 8, **properties},
        "extra": {},
        "traits": [],
    }
    return NodeContext(uuid="n1", node=node, ports={})


def _rule(
    *conditions: dict[str, Any],
    actions: list[dict[str, Any]] | None = None,
    scope: str | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "conditions": list(conditions),
        "actions": actions
        or [{"action": "set-attribute", "path": "/extra/hit", "value": True}],
    }
    if scope:
        body["scope"] = scope
    return validation.validate(body)


def _applies(*conditions: dict[str, Any], data: Any = None, **props: Any) -> bool:
    ctx = _ctx(**props)
    applied = runner.apply_rules(
        [_rule(*conditions)], DATA if data is None else data, ctx
    )
    return bool(applied)


@pytest.mark.parametrize(
    "condition,expected",
    [
        ({"op": "eq", "field": "memory_mb", "value": 16384}, True),
        ({"op": "eq", "field": "data://memory_mb", "value": 16384}, True),
        ({"op": "ge", "field": "inventory.cpu.count", "value": 8}, True),
        (
            {"op": "eq", "field": "$.inventory.cpu.architecture", "value": "x86_64"},
            True,
        ),
        ({"op": "eq", "field": "node://properties.cpus", "value": 8}, True),
        (
            {
                "op": "matches",
                "field": "inventory.system_vendor.manufacturer",
                "value": "Dell.*",
            },
            True,
        ),
        ({"op": "eq", "field": "memory_mb", "value": 1, "invert": True}, True),
        ({"op": "eq", "field": "no.such.field", "value": 1}, False),
        # a missing field never matches, even inverted
        ({"op": "eq", "field": "no.such.field", "value": 1, "invert": True}, False),
        ({"op": "is-empty", "field": "no.such.field"}, True),
        # several values: any / all / first
        (
            {
                "op": "in-net",
                "field": "inventory.interfaces[*].ipv4_address",
                "value": "192.168.1.0/24",
            },
            True,
        ),
        (
            {
                "op": "in-net",
                "field": "inventory.interfaces[*].ipv4_address",
                "value": "192.168.1.0/24",
                "multiple": "all",
            },
            False,
        ),
        (
            {
                "op": "is-empty",
                "field": "inventory.interfaces[*].ipv4_address",
                "multiple": "first",
            },
            False,
        ),
        (
            {
                "op": "is-empty",
                "field": "inventory.interfaces[*].ipv4_address",
                "multiple": "any",
            },
            True,
        ),
    ],
)
def test_conditions(condition: dict[str, Any], expected: bool) -> None:
    assert _applies(condition) is expected


def test_every_condition_must_hold() -> None:
    assert not _applies(
        {"op": "eq", "field": "memory_mb", "value": 16384},
        {"op": "eq", "field": "inventory.cpu.count", "value": 4},
    )


def test_scope_matches_the_node() -> None:
    rule = _rule(scope="gpu-rack")
    assert runner.apply_rules([rule], DATA, _ctx(inspection_scope="gpu-rack"))
    assert not runner.apply_rules([rule], DATA, _ctx(inspection_scope="other"))
    assert not runner.apply_rules([rule], DATA, _ctx())
    assert runner.apply_rules([_rule()], DATA, _ctx(inspection_scope="any"))


def test_actions_record_changes_with_formatted_values() -> None:
    ctx = _ctx(capabilities="boot_mode:uefi")
    rule = _rule(
        actions=[
            {
                "action": "set-attribute",
                "path": "extra/vendor",
                "value": {
                    "name": "{data[inventory][system_vendor][manufacturer]}",
                    "cpus": ["{data[inventory][cpu][count]}"],
                },
            },
            {"action": "set-capability", "name": "gpu", "value": "none"},
            {"action": "extend-attribute", "path": "/extra/tags", "value": "a"},
            {
                "action": "extend-attribute",
                "path": "/extra/tags",
                "value": "a",
                "unique": True,
            },
            {"action": "extend-attribute", "path": "/extra/tags", "value": "b"},
            {"action": "add-trait", "name": "CUSTOM_DELL"},
            {"action": "remove-trait", "name": "CUSTOM_OLD"},
        ]
    )
    runner.apply_rules([rule], DATA, ctx)
    assert ctx.current("/extra/vendor") == {"name": "Dell Inc.", "cpus": ["8"]}
    assert ctx.current("/properties/capabilities") == "boot_mode:uefi,gpu:none"
    assert ctx.current("/extra/tags") == ["a", "b"]
    assert ctx.traits_to_add == ["CUSTOM_DELL"]
    assert ctx.traits_to_remove == ["CUSTOM_OLD"]


def test_later_rules_see_earlier_changes() -> None:
    first = _rule(
        actions=[{"action": "set-attribute", "path": "/extra/stage", "value": "one"}]
    )
    second = _rule(
        {"op": "eq", "field": "node://extra.stage", "value": "one"},
        actions=[{"action": "add-trait", "name": "CUSTOM_TWO"}],
    )
    ctx = _ctx()
    assert runner.apply_rules([first, second], DATA, ctx) == [
        first["uuid"],
        second["uuid"],
    ]
    assert ctx.traits_to_add == ["CUSTOM_TWO"]


def test_fail_action_ends_processing_with_its_message() -> None:
    rule = _rule(
        {"op": "lt", "field": "memory_mb", "value": 32768},
        actions=[{"action": "fail", "message": "Not enough RAM"}],
    )
    with pytest.raises(exceptions.ProcessingError, match="^Not enough RAM$"):
        runner.apply_rules([rule], DATA, _ctx())
    quiet = _rule(
        {"op": "lt", "field": "memory_mb", "value": 1024},
        actions=[{"action": "fail", "message": "Not enough RAM"}],
    )
    assert runner.apply_rules([quiet], DATA, _ctx()) == []


def test_missing_data_in_a_format_names_rule_and_reference() -> None:
    rule = _rule(
        actions=[
            {
                "action": "set-attribute",
                "path": "/extra/x",
                "value": "{data[inventory][bmc_address]}",
            }
        ]
    )
    with pytest.raises(exceptions.ProcessingError) as caught:
        runner.apply_rules([rule], DATA, _ctx())
    assert f"rule {rule['uuid']} action 0 (set-attribute)" in caught.value.message
    assert "{data[inventory][bmc_address]}" in caught.value.message


def test_extend_attribute_refuses_a_non_list() -> None:
    ctx = _ctx()
    ctx.node["extra"]["tags"] = "a"
    rule = _rule(
        actions=[{"action": "extend-attribute", "path": "/extra/tags", "value": "b"}]
    )
    with pytest.raises(exceptions.ProcessingError, match="is not a list"):
        runner.apply_rules([rule], DATA, ctx)


@pytest.mark.parametrize(
    "data", [{}, {"inventory": None}, {"inventory": []}, {"memory_mb": "lots"}]
)
def test_malformed_data_does_not_match_or_raise(data: dict[str, Any]) -> None:
    assert not _applies(
        {"op": "gt", "field": "inventory.cpu.count", "value": 1}, data=data
    )
    assert not _applies({"op": "gt", "field": "memory_mb", "value": 1}, data=data)
