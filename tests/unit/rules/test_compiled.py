"""What compiling does once: JSONPaths into plain lookups (finding what
jsonpath_ng finds), templates parsed, and the trial that writes nothing."""

from typing import Any

import jsonpath_ng
import pytest

from inspector.rules import paths, templates, trial, validation

SOURCE: dict[str, Any] = {
    "a": [{"b": 1}, {"b": 2}, {"c": 3}],
    "x": {"y": None, "z": [1, 2]},
    "s": "text",
    "n": 5,
}


@pytest.mark.parametrize(
    "path",
    [
        "a[*].b",
        "x.y",
        "x.z[-1]",
        "x.z[5]",
        "x.*",
        "a.b",
        "s[0]",
        "s.*",
        "$",
        "$.a[0]",
        "x.z[*]",
        "nope",
        "n.m",
        "a[0,1]",
        "a[1:]",
        "`this`",
    ],
)
def test_a_compiled_path_finds_what_jsonpath_finds(path: str) -> None:
    expected = [m.value for m in jsonpath_ng.parse(path).find(SOURCE)]
    assert paths.parse(path)(SOURCE) == expected


def test_templates_keep_v1_formatting_and_leave_regex_braces() -> None:
    ns = {"data": {"n": 5}, "inventory": {"m": 7}, "node": {"d": {"k": "v"}}}
    assert templates.action_template("{data[n]}").render(ns) == "5"  # type: ignore[union-attr]
    assert templates.action_template("{inventory[m]}").render(ns) == 7  # type: ignore[union-attr]
    assert templates.action_template("{node.d[k]}!{{x}}").render(ns) == "v!{x}"  # type: ignore[union-attr]
    assert templates.action_template("{data[n]:>3}").render(ns) == "  5"  # type: ignore[union-attr]
    assert templates.action_template("plain") is None
    assert templates.condition_template("^a{3}$") is None
    found = templates.condition_template("^{node[d][k]}{2}$")
    assert found is not None and found.render(ns) == "^v{2}$"
    with pytest.raises(ValueError, match="names 'other'"):
        templates.action_template("{other}")
    with pytest.raises(templates.Unresolved, match="outside a loop"):
        templates.action_template("{item}").render(ns)  # type: ignore[union-attr]


def test_trial_reports_and_writes_nothing() -> None:
    rules = [
        validation.validate(
            {
                "priority": 5,
                "conditions": [
                    {"op": "ge", "field": "{inventory[memory_mb]}", "value": 1024}
                ],
                "actions": [
                    {"action": "add-trait", "name": "CUSTOM_BIG"},
                    {
                        "action": "set-attribute",
                        "path": "/extra/mem",
                        "value": "{inventory[memory_mb]}",
                    },
                    {"action": "api-call", "url": "http://hook.example/x"},
                ],
            }
        ),
        validation.validate(
            {
                "sensitive": True,
                "actions": [
                    {
                        "action": "set-attribute",
                        "path": "/driver_info/pw",
                        "value": "s3",
                    }
                ],
            }
        ),
        validation.validate(
            {
                "conditions": [{"op": "eq", "field": "nope", "value": 1}],
                "actions": [{"action": "fail", "message": "never"}],
            }
        ),
    ]
    data = {"inventory": {"memory_mb": 2048}}
    node = {"uuid": "n1", "properties": {}, "extra": {}}
    from inspector.rules import runner

    settings = runner.RunSettings(allowed_hosts=("hook.example",))
    answer = trial.run(rules, data, node, [], settings)
    assert node == {"uuid": "n1", "properties": {}, "extra": {}}
    assert data == {"inventory": {"memory_mb": 2048}}
    first, secret, never = answer["rules"]
    assert first["matched"] and first["conditions"][0]["values"] == [2048]
    assert first["actions"][1]["params"] == {"path": "/extra/mem", "value": 2048}
    assert first["actions"][2]["would"][0]["called"] is False
    assert secret["actions"][0]["params"] == {"path": "***", "value": "***"}
    assert not never["matched"] and never["conditions"][0]["matched"] is False
    assert answer["changes"]["traits_to_add"] == ["CUSTOM_BIG"]
    assert answer["changes"]["node_patches"] == [
        {"op": "add", "path": "/extra/mem", "value": 2048},
        {"op": "add", "path": "/driver_info/pw", "value": "***"},
    ]
    assert answer["would_write"] and answer["error"] is None


def test_trial_stops_at_the_error_the_processing_would_end_on() -> None:
    rules = [
        validation.validate(
            {
                "actions": [
                    {
                        "action": "set-attribute",
                        "path": "/extra/x",
                        "value": "{inventory[no]}",
                    }
                ]
            }
        ),
        validation.validate({"actions": [{"action": "add-trait", "name": "CUSTOM_X"}]}),
    ]
    answer = trial.run(rules, {"inventory": {}}, {"uuid": "n1"}, [])
    assert len(answer["rules"]) == 1
    assert "does not resolve" in answer["error"]
    assert answer["would_write"] is False


def test_trial_masks_a_sensitive_rules_port_patches() -> None:
    rules = [
        validation.validate(
            {
                "sensitive": True,
                "actions": [
                    {
                        "action": "set-port-attribute",
                        "port_id": "p-1",
                        "path": "/extra/secret",
                        "value": "s3",
                    }
                ],
            }
        ),
        validation.validate(
            {
                "actions": [
                    {
                        "action": "set-port-attribute",
                        "port_id": "p-1",
                        "path": "/extra/open",
                        "value": "o",
                    }
                ]
            }
        ),
    ]
    port = {"uuid": "p-1", "address": "aa:bb:cc:dd:ee:ff", "extra": {}}
    answer = trial.run(rules, {}, {"uuid": "n1"}, [port])
    assert answer["changes"]["port_patches"] == {
        "p-1": [
            {"op": "add", "path": "/extra/secret", "value": "***"},
            {"op": "add", "path": "/extra/open", "value": "o"},
        ]
    }
