"""The 1.24 rule language: priority, negation, loops, variables, the new
operators and actions, sensitive rules, and the errors a rule gives a node."""

import copy
from typing import Any

import pytest

from inspector import exceptions
from inspector.hooks.base import NodeContext
from inspector.rules import masking, runner, validation

DATA: dict[str, Any] = {
    "inventory": {
        "memory": {"physical_mb": 16384},
        "cpu": {"count": 8, "architecture": "x86_64"},
        "interfaces": [
            {
                "name": "eth0",
                "mac_address": "aa:bb:cc:dd:ee:01",
                "ipv4_address": "10.0.0.5",
            },
            {"name": "eth1", "mac_address": "aa:bb:cc:dd:ee:02", "ipv4_address": None},
        ],
        "system_vendor": {"manufacturer": "Dell Inc.", "product_name": "R640"},
    },
    "ipmi_address": "192.168.1.5",
    "flag": "yes",
    "nothing": None,
}
PORT: dict[str, Any] = {
    "uuid": "p-1",
    "address": "aa:bb:cc:dd:ee:01",
    "extra": {"tags": ["a"]},
}
HIT = {"action": "set-attribute", "path": "/extra/hit", "value": True}


def _ctx(**node: Any) -> NodeContext:
    body: dict[str, Any] = {
        "uuid": "n1",
        "properties": {"cpus": 8},
        "driver_info": {"ipmi_address": "192.168.1.5", "ipmi_password": "secret"},
        "extra": {},
        **node,
    }
    return NodeContext(
        uuid="n1", node=body, ports={PORT["address"]: copy.deepcopy(PORT)}
    )


def _rule(
    *conditions: dict[str, Any], actions: Any = None, **fields: Any
) -> dict[str, Any]:
    body = {"conditions": list(conditions), "actions": actions or [HIT], **fields}
    return validation.validate(body)


def _run(*rules: dict[str, Any], data: Any = None, ctx: Any = None) -> NodeContext:
    ctx = ctx or _ctx()
    runner.apply_rules(list(rules), copy.deepcopy(DATA if data is None else data), ctx)
    return ctx


def _applies(*conditions: dict[str, Any]) -> bool:
    return _run(_rule(*conditions)).current("/extra/hit") is True


@pytest.mark.parametrize(
    "condition,expected",
    [
        ({"op": "one-of", "field": "inventory.cpu.count", "values": [4, "8"]}, True),
        ({"op": "one-of", "field": "inventory.cpu.count", "values": [4, 16]}, False),
        ({"op": "is-none", "field": "nothing"}, True),
        ({"op": "is-none", "field": "no.such"}, True),
        ({"op": "is-none", "field": "flag"}, False),
        ({"op": "is-true", "field": "flag"}, True),
        ({"op": "is-true", "field": "inventory.cpu.count"}, True),
        ({"op": "is-false", "field": "flag"}, False),
        ({"op": "is-false", "field": "nothing"}, True),
        ({"op": "!eq", "field": "inventory.cpu.count", "value": 4}, True),
        ({"op": "!eq", "field": "inventory.cpu.count", "value": 8}, False),
        ({"op": "!is-true", "field": "flag"}, False),
        # variables: from the inventory, the node, numbers kept numbers
        (
            {
                "op": "eq",
                "field": "ipmi_address",
                "value": "{node.driver_info[ipmi_address]}",
            },
            True,
        ),
        (
            {
                "op": "gt",
                "field": "{inventory[memory][physical_mb]}",
                "value": 4096,
            },
            True,
        ),
        (
            {
                "op": "lt",
                "field": "{node[properties][cpus]}",
                "value": "{inventory[memory][physical_mb]}",
            },
            True,
        ),
        (
            {
                "op": "matches",
                "field": "inventory.system_vendor.product_name",
                "value": "R{inventory[cpu][count]}?6.{2}",
            },
            True,
        ),
        # a loop: some interface has an address in the network
        (
            {
                "op": "in-net",
                "field": "{item[ipv4_address]}",
                "value": "10.0.0.0/8",
                "loop": "{inventory[interfaces]}",
            },
            True,
        ),
        (
            {
                "op": "in-net",
                "field": "{item[ipv4_address]}",
                "value": "10.0.0.0/8",
                "loop": "{inventory[interfaces]}",
                "multiple": "all",
            },
            False,
        ),
        (
            {
                "op": "eq",
                "field": "inventory.cpu.count",
                "value": "{item}",
                "loop": [2, 8],
            },
            True,
        ),
    ],
)
def test_conditions(condition: dict[str, Any], expected: bool) -> None:
    assert _applies(condition) is expected


def test_negation_is_stored_as_invert() -> None:
    rule = _rule({"op": "!eq", "field": "a", "value": 1})
    assert rule["conditions"][0]["op"] == "eq"
    assert rule["conditions"][0]["invert"] is True


def test_priority_orders_rules_higher_first_then_creation() -> None:
    def setter(value: str, **fields: Any) -> dict[str, Any]:
        action = {"action": "set-attribute", "path": "/extra/last", "value": value}
        return _rule(actions=[action], **fields)

    low, high, high_later = (
        setter("low"),
        setter("high", priority=10),
        setter("later", priority=10),
    )
    ctx = _ctx()
    applied = runner.apply_rules([low, high, high_later], DATA, ctx)
    assert applied == [high["uuid"], high_later["uuid"], low["uuid"]]
    assert ctx.current("/extra/last") == "low"  # the lowest priority runs last


def test_action_loop_and_variables_keep_types() -> None:
    rule = _rule(
        actions=[
            {
                "action": "extend-attribute",
                "path": "/extra/nics",
                "value": "{item[name]}",
                "loop": "{inventory[interfaces]}",
            },
            {
                "action": "set-attribute",
                "path": "/properties/memory_mb",
                "value": "{inventory[memory][physical_mb]}",
            },
            {
                "action": "set-attribute",
                "path": "/extra/v1",
                "value": "{data[inventory][memory][physical_mb]}",
            },
            {
                "action": "set-attribute",
                "path": "/extra/bmc",
                "value": "ipmi://{node.driver_info[ipmi_address]}",
            },
        ]
    )
    ctx = _run(rule)
    assert ctx.current("/extra/nics") == ["eth0", "eth1"]
    assert ctx.current("/properties/memory_mb") == 16384  # a number stays one
    assert ctx.current("/extra/v1") == "16384"  # v1: {data[...]} is text
    assert ctx.current("/extra/bmc") == "ipmi://192.168.1.5"


def test_loop_items_are_templates_rendered_before_the_items_run() -> None:
    """As Ironic 39 runs them: the variables inside a written loop's items
    are filled first, then each item runs (a condition over them, and an
    action whose path and value come from the item)."""
    items = [
        {"k": "nic0", "v": "{inventory[interfaces][0][name]}"},
        {"k": "nic1", "v": "{inventory[interfaces][1][name]}"},
    ]
    rule = _rule(
        {
            "op": "matches",
            "field": "{item[cpus]}",
            "value": "^8$",
            "multiple": "all",
            "loop": [{"cpus": "{inventory[cpu][count]}"}, {"cpus": "8"}],
        },
        actions=[
            {
                "action": "set-attribute",
                "path": "/extra/{item[k]}",
                "value": "{item[v]}",
                "loop": items,
            },
            {"action": "add-trait", "name": "{item}", "loop": ["CUSTOM_{data[flag]}"]},
        ],
    )
    assert rule["actions"][0]["loop"] == items  # stored as written
    ctx = _run(rule)
    assert ctx.current("/extra/nic0") == "eth0"
    assert ctx.current("/extra/nic1") == "eth1"
    assert ctx.traits_to_add == ["CUSTOM_yes"]


def test_a_loop_item_that_does_not_resolve_names_the_rule() -> None:
    rule = _rule(
        {"op": "eq", "field": "{item}", "value": 1, "loop": ["{inventory[nope]}"]}
    )
    with pytest.raises(exceptions.ProcessingError) as caught:
        _run(rule)
    assert caught.value.message == (
        f"rule {rule['uuid']} condition 0 (eq): loop: "
        "{inventory[nope]} does not resolve: no key 'nope'"
    )


def test_port_actions_by_uuid_and_mac() -> None:
    rule = _rule(
        actions=[
            {
                "action": "set-port-attribute",
                "port_id": "p-1",
                "path": "/extra/sw",
                "value": "s1",
            },
            {
                "action": "extend-port-attribute",
                "port_id": "AA:BB:CC:DD:EE:01",
                "path": "extra/tags",
                "value": "b",
            },
            {"action": "del-port-attribute", "port_id": "p-1", "path": "/extra/tags"},
            {
                "action": "set-port-attribute",
                "port_id": "{item[uuid]}",
                "path": "/physical_network",
                "value": "fabric",
                "loop": "{ports}",
            },
        ]
    )
    ctx = _run(rule)
    assert ctx.port_patches["p-1"] == [
        {"op": "add", "path": "/extra/sw", "value": "s1"},
        {"op": "add", "path": "/extra/tags", "value": ["a", "b"]},
        {"op": "remove", "path": "/extra/tags"},
        {"op": "add", "path": "/physical_network", "value": "fabric"},
    ]


def test_a_port_that_is_not_the_nodes_names_the_rule() -> None:
    rule = _rule(
        actions=[
            {
                "action": "set-port-attribute",
                "port_id": "p-9",
                "path": "/extra/x",
                "value": 1,
            }
        ]
    )
    with pytest.raises(exceptions.ProcessingError) as caught:
        _run(rule)
    assert f"rule {rule['uuid']} action 0 (set-port-attribute)" in caught.value.message
    assert "'p-9' is not a port of the node" in caught.value.message


def test_plugin_data_capability_and_attribute_actions() -> None:
    rule = _rule(
        actions=[
            {"action": "set-plugin-data", "path": "extra.rack", "value": "r1"},
            {
                "action": "extend-plugin-data",
                "path": "tags",
                "value": "x",
                "unique": True,
            },
            {
                "action": "extend-plugin-data",
                "path": "tags",
                "value": "x",
                "unique": True,
            },
            {"action": "unset-plugin-data", "path": "flag"},
            {"action": "unset-capability", "name": "boot_mode"},
            {"action": "del-attribute", "path": "/extra/old"},
            {
                "action": "log",
                "msg": "seen {inventory[cpu][count]} CPUs",
                "level": "info",
            },
        ]
    )
    data = copy.deepcopy(DATA)
    ctx = _ctx(extra={"old": 1}, properties={"capabilities": "boot_mode:uefi,x:y"})
    runner.apply_rules([rule], data, ctx)
    assert data["extra"] == {"rack": "r1"} and data["tags"] == ["x"]
    assert "flag" not in data
    assert ctx.current("/properties/capabilities") == "x:y"
    assert ctx.current("/extra/old") is None


@pytest.mark.parametrize(
    "condition,cause",
    [
        (
            {"op": "eq", "field": "{inventory[nope]}", "value": 1},
            "{inventory[nope]} does not resolve: no key 'nope'",
        ),
        (
            {"op": "eq", "field": "{item}", "value": 1, "loop": "{inventory[cpu]}"},
            "loop: {inventory[cpu]} is a dict, not a list",
        ),
        (
            {"op": "eq", "field": "a", "value": "{inventory[cpu][count][x]}"},
            "asked of a int",
        ),
        (
            {"op": "in-net", "field": "ipmi_address", "value": "{data[flag]}"},
            "'yes' is not a network",
        ),
    ],
)
def test_run_time_errors_name_the_rule_and_the_cause(
    condition: dict[str, Any], cause: str
) -> None:
    rule = _rule(condition)
    with pytest.raises(exceptions.ProcessingError) as caught:
        _run(rule, data={**DATA, "a": 1})
    assert caught.value.message.startswith(f"rule {rule['uuid']} condition 0 (")
    assert cause in caught.value.message


def test_a_sensitive_rule_hides_its_cause() -> None:
    rule = _rule(
        {"op": "eq", "field": "{node[driver_info][nope]}", "value": 1}, sensitive=True
    )
    with pytest.raises(exceptions.ProcessingError) as caught:
        _run(rule)
    assert rule["uuid"] in caught.value.message
    assert "nope" not in caught.value.message
    assert "sensitive" in caught.value.message


def test_masking_keeps_the_shape_hides_the_values() -> None:
    rule = _rule(
        {"op": "eq", "field": "ipmi_address", "value": "secret"},
        actions=[{"action": "set-attribute", "path": "/driver_info/p", "value": "pw"}],
        sensitive=True,
    )
    shown = masking.masked(rule)
    assert shown["conditions"] == [
        {"op": "eq", "field": "***", "value": "***", "multiple": "any", "invert": False}
    ]
    assert shown["actions"] == [
        {"action": "set-attribute", "path": "***", "value": "***"}
    ]
    assert masking.masked({**rule, "sensitive": False}) == {**rule, "sensitive": False}


def test_a_stored_rule_that_no_longer_compiles_fails_by_name() -> None:
    stored = {
        "uuid": "u-1",
        "conditions": [
            {"op": "gone", "field": "a", "multiple": "any", "invert": False}
        ],
        "actions": [HIT],
    }
    fine = _rule()
    ctx = _ctx()
    with pytest.raises(exceptions.ProcessingError, match="^rule u-1: the stored rule"):
        runner.apply_rules([fine, stored], DATA, ctx)


NEW = validation.RuleChecks(new_language=True)
OLD = validation.RuleChecks(new_language=False)


@pytest.mark.parametrize(
    "body,where",
    [
        ({"priority": 10000}, "priority"),
        ({"priority": -1}, "priority"),
        ({"priority": "1"}, "priority"),
        ({"priority": True}, "priority"),
        ({"sensitive": "yes"}, "sensitive"),
        (
            {"conditions": [{"op": "!nope", "field": "a", "value": 1}]},
            "conditions[0].op",
        ),
        (
            {"conditions": [{"op": "!eq", "field": "a", "value": 1, "invert": True}]},
            "conditions[0].op",
        ),
        (
            {"conditions": [{"op": "eq", "field": "a", "value": "{item}"}]},
            "conditions[0]",
        ),
        (
            {"conditions": [{"op": "eq", "field": "a", "value": 1, "loop": 5}]},
            "conditions[0].loop",
        ),
        (
            {
                "conditions": [
                    {"op": "eq", "field": "a", "value": 1, "loop": [{"x": "{item}"}]}
                ]
            },
            "conditions[0].loop",
        ),
        ({"actions": [{**HIT, "loop": [["{item[a]}"]]}]}, "actions[0].loop"),
        (
            {
                "conditions": [
                    {"op": "eq", "field": "a", "value": 1, "loop": "x{ports}"}
                ]
            },
            "conditions[0].loop",
        ),
        (
            {"conditions": [{"op": "eq", "field": "{nodes[x]}", "value": 1}]},
            "conditions[0].field",
        ),
        ({"actions": [{**HIT, "value": "{bogus[x]}"}]}, "actions[0]"),
        ({"actions": [{**HIT, "value": "{item}"}]}, "actions[0]"),
        ({"actions": [{**HIT, "value": "a}b"}]}, "actions[0]"),
        (
            {"actions": [{"action": "log", "msg": "x", "level": "loud"}]},
            "actions[0].level",
        ),
        (
            {"actions": [{"action": "set-plugin-data", "path": "..", "value": 1}]},
            "actions[0]",
        ),
        ({"actions": [{"action": "api-call", "url": "ftp://h/x"}]}, "actions[0]"),
        (
            {"actions": [{"action": "api-call", "url": "http://{data[h]}/x"}]},
            "actions[0]",
        ),
        (
            {"actions": [{"action": "api-call", "url": "http://h/x", "timeout": 0}]},
            "actions[0].timeout",
        ),
        (
            {"actions": [{"action": "api-call", "url": "http://evil:80/"}]},
            "actions[0].url",
        ),
        (
            {"actions": [{"action": "api-call", "url": "http://good:81/"}]},
            "actions[0].url",
        ),
    ],
)
def test_bad_rules_are_refused_naming_the_part(
    body: dict[str, Any], where: str
) -> None:
    body = {"actions": [HIT], **body}
    checks = validation.RuleChecks(allowed_hosts=("good:80", "other"))
    with pytest.raises(exceptions.InvalidInput) as caught:
        validation.validate(body, checks)
    assert caught.value.message.startswith(f"Invalid rule: {where}:"), (
        caught.value.message
    )


@pytest.mark.parametrize(
    "body,where",
    [
        ({"priority": 1}, "priority"),
        ({"sensitive": False}, "sensitive"),
        ({"conditions": [{"op": "!eq", "field": "a", "value": 1}]}, "conditions[0].op"),
        (
            {"conditions": [{"op": "eq", "field": "a", "value": 1, "loop": [1]}]},
            "conditions[0].loop",
        ),
        (
            {"conditions": [{"op": "eq", "field": "a", "value": "{inventory[x]}"}]},
            "conditions[0]",
        ),
        ({"actions": [{**HIT, "value": "{node[x]}"}]}, "actions[0]"),
    ],
)
def test_the_new_language_is_refused_below_1_24(
    body: dict[str, Any], where: str
) -> None:
    body = {"actions": [HIT], **body}
    with pytest.raises(exceptions.InvalidInput) as caught:
        validation.validate(body, OLD)
    assert caught.value.message.startswith(f"Invalid rule: {where}:")
    assert "needs API version 1.24" in caught.value.message
    validation.validate(body, NEW)  # and accepted from 1.24


def test_api_call_to_an_allowed_host_is_accepted() -> None:
    checks = validation.RuleChecks(allowed_hosts=("good:80", "Other"))
    for url in ("http://good:80/hook", "https://other/x?node={node[uuid]}"):
        validation.validate({"actions": [{"action": "api-call", "url": url}]}, checks)
    empty = validation.RuleChecks(allowed_hosts=())
    with pytest.raises(exceptions.InvalidInput, match="api_call_allowed_hosts"):
        validation.validate(
            {"actions": [{"action": "api-call", "url": "http://good:80/"}]}, empty
        )


def test_api_call_refused_at_run_time_when_the_host_left_the_list() -> None:
    rule = _rule(actions=[{"action": "api-call", "url": "http://127.0.0.1:9/x"}])
    with pytest.raises(exceptions.ProcessingError) as caught:
        runner.compile_rules([rule]).apply(DATA, _ctx(), runner.RunSettings())
    assert f"rule {rule['uuid']} action 0 (api-call)" in caught.value.message
    assert "not on [rules]api_call_allowed_hosts" in caught.value.message


def test_api_call_that_cannot_connect_is_an_error_on_the_node() -> None:
    rule = _rule(
        actions=[{"action": "api-call", "url": "http://127.0.0.1:9/x", "timeout": 2}]
    )
    settings = runner.RunSettings(allowed_hosts=("127.0.0.1",))
    with pytest.raises(exceptions.ProcessingError) as caught:
        runner.compile_rules([rule]).apply(DATA, _ctx(), settings)
    assert (
        "api-call to http://127.0.0.1:9/x failed: ConnectionError"
        in caught.value.message
    )


def test_a_v1_rule_keeps_its_condition_values_as_written() -> None:
    """Below 1.24 (and for every rule stored before it) a condition's value
    is never formatted, as v1 did; from 1.24 its variables are read."""
    condition = {"op": "eq", "field": "literal", "value": "{data[flag]}"}
    data = {**DATA, "literal": "{data[flag]}"}
    v1 = validation.validate({"conditions": [condition], "actions": [HIT]}, OLD)
    assert v1["language"] == 1
    assert _run(v1, data=data).current("/extra/hit") is True
    new = validation.validate({"conditions": [condition], "actions": [HIT]}, NEW)
    assert new["language"] == validation.LANGUAGE
    assert _run(new, data=data).current("/extra/hit") is None  # "yes" != literal
