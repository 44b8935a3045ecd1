"""Ironic's inspection-rule language to and from ours."""

import json
from typing import Any

import pytest

from inspector import exceptions
from inspector.rules import (
    exchange,
    ironic_export,
    ironic_format,
    ironic_import,
    validation,
)

UUID = "3f0e4a57-8d1c-4a5e-9f57-4b1c2d3e4f50"
PORT = "7d6a5b4c-3e2f-4a1b-8c9d-0e1f2a3b4c5d"


def _ours(**fields: Any) -> dict[str, Any]:
    return validation.validate({"uuid": UUID, **fields})


def test_every_construct_out_and_back() -> None:
    rule = _ours(
        description="all",
        priority=42,
        scope="rack-1",
        conditions=[
            {"op": "ge", "field": "inventory.memory.physical_mb", "value": 4096},
            {"op": "!contains", "field": "node://driver", "value": "^ipmi"},
            {"op": "eq", "field": "cpus", "value": 4},
            {
                "op": "in-net",
                "field": "{item[ipv4_address]}",
                "value": "10.0.0.0/8",
                "loop": [{"ipv4_address": "10.1.1.1"}],
                "multiple": "all",
            },
            {
                "op": "one-of",
                "field": "inventory.cpu.architecture",
                "values": ["x86_64", 7],
            },
            {"op": "is-true", "field": "node://extra.ready"},
        ],
        actions=[
            {
                "action": "set-attribute",
                "path": "/extra/vendor",
                "value": "{data[vendor]}",
            },
            {"action": "set-capability", "name": "boot_mode", "value": "uefi"},
            {"action": "add-trait", "name": "CUSTOM_X"},
            {"action": "fail", "message": "no"},
            {
                "action": "set-port-attribute",
                "port_id": PORT,
                "path": "/physical_network",
                "value": "fabric",
            },
            {
                "action": "extend-attribute",
                "path": "/extra/nics",
                "value": "{item}",
                "loop": ["a", "b"],
                "unique": True,
            },
            {"action": "set-plugin-data", "path": "a.b", "value": 1},
            {"action": "log", "msg": "hi {node.uuid}", "level": "warning"},
        ],
    )
    out = ironic_export.to_ironic(rule)
    assert out["uuid"] == UUID and out["priority"] == 42 and out["phase"] == "main"
    assert out["conditions"] == [
        {
            "op": "eq",
            "args": {"values": ["{node.properties[inspection_scope]}", "rack-1"]},
        },
        {"op": "!lt", "args": {"values": ["{inventory[memory][physical_mb]}", 4096]}},
        {"op": "!contains", "args": {"value": "{node.driver}", "regex": "^ipmi"}},
        {"op": "eq", "args": {"values": ["{plugin_data[cpus]}", "4"]}},
        {
            "op": "in-net",
            "args": {"address": "{item[ipv4_address]}", "subnet": "10.0.0.0/8"},
            "loop": [{"ipv4_address": "10.1.1.1"}],
            "multiple": "all",
        },
        {
            "op": "one-of",
            "args": {
                "value": "{inventory[cpu][architecture]}",
                "values": ["x86_64", "7"],
            },
        },
        {"op": "is-true", "args": {"value": "{node.extra[ready]}"}},
    ]
    assert out["actions"][0] == {
        "op": "set-attribute",
        "args": {"path": "/extra/vendor", "value": "{plugin_data[vendor]}"},
    }
    assert out["actions"][3] == {"op": "fail", "args": {"msg": "no"}}
    assert out["actions"][5]["loop"] == ["a", "b"]
    back = validation.validate(ironic_import.from_ironic(out, "r"))
    # the scope comes back as the condition it is in Ironic's language
    assert back["scope"] is None
    assert back["conditions"][0]["field"] == "node://properties.inspection_scope"
    assert back["conditions"][1] == {
        "op": "lt",
        "field": "inventory.memory.physical_mb",
        "value": 4096,
        "multiple": "any",
        "invert": True,
    }
    assert back["conditions"][4]["loop"] == [{"ipv4_address": "10.1.1.1"}]
    assert back["conditions"][4]["field"] == "{item[ipv4_address]}"
    assert back["actions"][3] == {"action": "fail", "message": "no"}
    assert back["actions"][1:3] == rule["actions"][1:3]


@pytest.mark.parametrize(
    "args",
    [
        ["{inventory[cpu][count]}", "4"],
        {"values": ["{inventory[cpu][count]}", "4"]},
        [["{inventory[cpu][count]}", "4"]],  # Ironic's positional reading
        ["4", "{inventory[cpu][count]}"],  # the variable second
    ],
)
def test_condition_args_as_list_or_values(args: Any) -> None:
    rule = {
        "conditions": [{"op": "eq", "args": args}],
        "actions": [{"op": "add-trait", "args": ["CUSTOM_A"]}],
    }
    ours = validation.validate(ironic_import.from_ironic(rule, "r"))
    assert ours["conditions"][0]["field"] == "inventory.cpu.count"
    assert ours["conditions"][0]["value"] == "4"


def test_swapped_sides_flip_the_comparison() -> None:
    rule = {
        "conditions": [{"op": "lt", "args": [4, "{inventory[cpu][count]}"]}],
        "actions": [{"op": "add-trait", "args": ["CUSTOM_A"]}],
    }
    cond = ironic_import.from_ironic(rule, "r")["conditions"][0]
    assert (cond["op"], cond["value"]) == ("gt", 4)


def test_ironic_paths_become_pointers() -> None:
    rule = {
        "actions": [
            {"op": "set-attribute", "args": {"path": "properties/cpus", "value": "1"}},
            {"op": "set-attribute", "args": {"path": "extra.a", "value": "1"}},
            {"op": "del-attribute", "args": ["/extra/b"]},
            {"op": "set-plugin-data", "args": ["x.y", 1]},
        ]
    }
    paths = [a["path"] for a in ironic_import.from_ironic(rule, "r")["actions"]]
    assert paths == ["/properties/cpus", "/extra/a", "/extra/b", "x.y"]


@pytest.mark.parametrize(
    ("rule", "named"),
    [
        (
            {"actions": [{"op": "api-call", "args": {"url": "http://x"}}]},
            "actions[0]: api-call",
        ),
        (
            {
                "conditions": [
                    {
                        "op": "eq",
                        "args": ["{item}", 1],
                        "loop": [1, 2],
                        "multiple": "last",
                    }
                ],
                "actions": [],
            },
            "conditions[0].multiple: last",
        ),
        (
            {"conditions": [{"op": "eq", "args": ["a", "b"]}], "actions": []},
            "conditions[0].args.values[0]: 'a'",
        ),
        ({"phase": "cleaning", "actions": []}, "phase: 'cleaning'"),
        (
            {"sensitive": True, "conditions": None, "actions": None},
            "does not show a sensitive rule",
        ),
        (
            {"actions": [{"op": "add-trait", "args": {"trait": "X"}}]},
            "actions[0].args.trait: not an argument of add-trait",
        ),
        ({"owner": "x", "actions": []}, "owner: not a field"),
        (
            {
                "conditions": [{"op": "is-none", "args": ["{inventory[x]}"]}],
                "actions": [],
            },
            "conditions[0].op: is-none: Ironic formats its variables as text",
        ),
        (
            {"conditions": [{"op": "like", "args": []}], "actions": []},
            "conditions[0].op: 'like'",
        ),
    ],
)
def test_import_refuses_by_name(rule: dict[str, Any], named: str) -> None:
    with pytest.raises(ironic_format.Untranslatable) as caught:
        ironic_import.from_ironic(rule, "rule 3 (x)")
    assert caught.value.message.startswith("rule 3 (x)")
    assert named in caught.value.message


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        (
            {"actions": [{"action": "api-call", "url": "http://h/x"}]},
            "actions[0]: api-call",
        ),
        (
            {
                "conditions": [{"op": "eq", "field": "interfaces[*].mac", "value": 1}],
                "actions": [{"action": "add-trait", "name": "CUSTOM_A"}],
            },
            "conditions[0].field: field 'interfaces[*].mac'",
        ),
        (
            {
                "actions": [
                    {
                        "action": "add-trait",
                        "name": "CUSTOM_{item}",
                        "loop": "{inventory[interfaces]}",
                    }
                ]
            },
            "actions[0].loop",
        ),
        (
            {
                "actions": [
                    {
                        "action": "set-port-attribute",
                        "port_id": "52:54:00:12:34:56",
                        "path": "/extra/a",
                        "value": 1,
                    }
                ]
            },
            "actions[0].port_id: 52:54:00:12:34:56",
        ),
        (
            {
                "actions": [
                    {"action": "add-trait", "name": "CUSTOM_{inventory[cpu][count]}"}
                ]
            },
            "actions[0].name: Ironic does not format",
        ),
        (
            {
                "conditions": [
                    {"op": "eq", "field": "{ports[0][address]}", "value": 1}
                ],
                "actions": [{"action": "add-trait", "name": "CUSTOM_A"}],
            },
            "no ports variable",
        ),
        (
            {
                "conditions": [
                    {
                        "op": "eq",
                        "field": "{item}",
                        "value": 1,
                        "loop": [1],
                        "multiple": "first",
                    }
                ],
                "actions": [{"action": "add-trait", "name": "CUSTOM_A"}],
            },
            "conditions[0].multiple: first",
        ),
        (
            {
                "conditions": [{"op": "is-none", "field": "inventory.x"}],
                "actions": [{"action": "add-trait", "name": "CUSTOM_A"}],
            },
            "conditions[0].op: is-none: Ironic formats its variables as text",
        ),
    ],
)
def test_export_refuses_by_name(fields: dict[str, Any], named: str) -> None:
    rule = validation.validate(
        {"uuid": UUID, **fields}, validation.RuleChecks(allowed_hosts=None)
    )
    with pytest.raises(ironic_format.Untranslatable) as caught:
        exchange.export([rule], exchange.IRONIC)
    assert caught.value.message.startswith(f"rule 0 ({UUID})")
    assert named in caught.value.message


def test_import_document_shapes() -> None:
    one = {"uuid": UUID, "actions": [{"op": "add-trait", "args": ["CUSTOM_A"]}]}
    answer = {
        "inspection_rules": [
            {**one, "links": [], "created_at": "x", "updated_at": None}
        ]
    }
    checks = validation.RuleChecks()
    for document in (answer, [one], one):
        rules = exchange.to_create(document, exchange.IRONIC, "f", checks)
        assert [r["uuid"] for r in rules] == [UUID]
    with pytest.raises(Exception, match="f: rule 0"):
        exchange.to_create([{"actions": []}], exchange.IRONIC, "f", checks)


def test_sensitive_rules_are_masked_in_both_formats_unless_asked() -> None:
    rule = _ours(
        sensitive=True,
        conditions=[
            {"op": "eq", "field": "inventory.bmc_address", "value": "10.0.0.5"}
        ],
        actions=[
            {"action": "set-attribute", "path": "/driver_info/p", "value": "s3cret"},
            {"action": "add-trait", "name": "{item}", "loop": ["CUSTOM_S3CRET"]},
        ],
    )
    ironic = exchange.export([rule], exchange.IRONIC)[0]
    assert "s3cret" not in json.dumps(ironic).lower()
    assert "10.0.0.5" not in json.dumps(ironic)
    assert ironic["actions"][0] == {"op": "set-attribute", "args": "***"}
    assert ironic["actions"][1] == {"op": "add-trait", "args": "***", "loop": "***"}
    assert ironic["conditions"][0]["op"] == "eq"
    ours = exchange.export([rule], exchange.INSPECTOR)[0]
    assert ours["actions"][0]["value"] == "***"
    assert exchange.warnings([rule], exchange.IRONIC) == [
        f"rule 0 ({UUID}): sensitive, its values masked (--with-secrets writes them)"
    ]
    assert exchange.warnings([rule], exchange.INSPECTOR) == exchange.warnings(
        [rule], exchange.IRONIC
    )
    # asked for: the values, and a note that they are there
    secret = exchange.export([rule], exchange.IRONIC, with_secrets=True)[0]
    assert secret["actions"][0]["args"]["value"] == "s3cret"
    assert exchange.warnings([rule], exchange.IRONIC, with_secrets=True) == [
        f"rule 0 ({UUID}): sensitive, written with its values"
    ]
    assert exchange.warnings([rule], exchange.INSPECTOR, with_secrets=True) == []
    checks = validation.RuleChecks()
    for fmt, masked in ((exchange.IRONIC, ironic), (exchange.INSPECTOR, ours)):
        with pytest.raises(exceptions.InvalidInput) as caught:
            exchange.to_create([masked], fmt, "f", checks)
        assert caught.value.message == (
            f"f: rule 0 ({UUID}) is a sensitive rule exported masked: "
            "export it with --with-secrets to import it"
        )
    (back,) = exchange.to_create([secret], exchange.IRONIC, "f", checks)
    assert back["actions"][0]["value"] == "s3cret" and back["sensitive"] is True


@pytest.mark.parametrize("bound", [1024, "1024"])
def test_gt_on_a_variable_compares_numbers_here(bound: Any) -> None:
    """Ironic 39 formats the variable as text and fails the inspection
    ("'>' not supported between instances of 'str' and 'int'"), or compares
    text with text; the same rule imported here compares numbers."""
    from inspector.rules import trial

    ironic = {
        "uuid": UUID,
        "conditions": [
            {
                "op": "gt",
                "args": {"values": ["{inventory[memory][physical_mb]}", bound]},
            }
        ],
        "actions": [{"op": "add-trait", "args": ["CUSTOM_BIG"]}],
    }
    rule = validation.validate(ironic_import.from_ironic(ironic, "r"))
    data = {"inventory": {"memory": {"physical_mb": 16384}}}
    answer = trial.run([rule], data, {"properties": {}, "extra": {}}, [])
    assert answer["error"] is None
    assert answer["changes"]["traits_to_add"] == ["CUSTOM_BIG"]
    small = {"inventory": {"memory": {"physical_mb": 512}}}
    assert trial.run([rule], small, {"properties": {}}, [])["applied"] == []
    notes = exchange.warnings([rule], exchange.IRONIC)
    assert notes and "compares its variables as text" in notes[0]


# Ironic's is-true and is-false on the text its variable formats to
# (str(True) is "True", str(1) is "1", a missing key the template itself)
IRONIC_TRUTH: dict[str, list[tuple[Any, bool]]] = {
    "is-true": [
        (True, True),
        ("yes", True),
        ("TRUE", True),
        (1, False),
        ("on", False),
        (False, False),
    ],
    "is-false": [
        (False, True),
        ("No", True),
        ("false", True),
        (0, False),
        ("off", False),
        (None, False),
    ],
}


@pytest.mark.parametrize("op", sorted(IRONIC_TRUTH))
def test_is_true_and_is_false_judge_as_ironic_does(op: str) -> None:
    from inspector.rules import trial

    rule = {
        "uuid": UUID,
        "conditions": [{"op": op, "args": {"value": "{inventory[flag]}"}}],
        "actions": [{"op": "add-trait", "args": {"name": "CUSTOM_HELD"}}],
    }
    (ours,) = exchange.to_create([rule], exchange.IRONIC, "f", validation.RuleChecks())
    assert ours["conditions"][0]["op"] == "matches"
    for value, held in IRONIC_TRUTH[op]:
        data = {"inventory": {"flag": value}}
        answer = trial.run([ours], data, {"uuid": "n", "properties": {}}, [])
        assert (answer["applied"] == [UUID]) is held, (op, value)
    # a missing key: Ironic judges the template's text, which is neither
    answer = trial.run([ours], {"inventory": {}}, {"uuid": "n", "properties": {}}, [])
    assert answer["applied"] == []


def test_ironic_defects_are_told_on_export_and_import() -> None:
    rule = _ours(
        actions=[
            {"action": "extend-plugin-data", "path": "tags", "value": "a"},
            {"action": "unset-plugin-data", "path": "old"},
        ]
    )
    notes = exchange.warnings([rule], exchange.IRONIC)
    assert [n.split(": ")[1] for n in notes] == [
        "actions[0] (extend-plugin-data)",
        "actions[1] (unset-plugin-data)",
    ]
    assert "ShallowMaskList is not JSON serializable" in notes[0]
    document = exchange.export([rule], exchange.IRONIC)
    imported = exchange.import_notes(document, exchange.IRONIC)
    assert [n.removesuffix("; here it does what it says") for n in imported] == notes
    assert exchange.import_notes(document, exchange.INSPECTOR) == []


def test_ironic_plugin_data_placeholder_is_read() -> None:
    """Ironic's API answers its plugin-data actions with the ``plugin_data``
    argument it fills when they run (``{}``), positionally too."""
    rule = {
        "uuid": UUID,
        "actions": [
            {
                "op": "set-plugin-data",
                "args": {"path": "a", "value": 1, "plugin_data": {}},
            },
            {"op": "extend-plugin-data", "args": ["b", 2, {}, True]},
            {"op": "unset-plugin-data", "args": ["c", {}]},
        ],
    }
    (ours,) = exchange.to_create([rule], exchange.IRONIC, "f", validation.RuleChecks())
    assert ours["actions"] == [
        {"action": "set-plugin-data", "path": "a", "value": 1},
        {"action": "extend-plugin-data", "path": "b", "value": 2, "unique": True},
        {"action": "unset-plugin-data", "path": "c"},
    ]
    rule["actions"] = [
        {
            "op": "set-plugin-data",
            "args": {"path": "a", "value": 1, "plugin_data": {"x": 1}},
        }
    ]
    with pytest.raises(exceptions.InvalidInput, match="args.plugin_data: Ironic fills"):
        exchange.to_create([rule], exchange.IRONIC, "f", validation.RuleChecks())


IRONIC_RULE = {"description": "gpu", "actions": [{"op": "add-trait", "args": ["X"]}]}
OUR_RULE = {
    "description": "gpu",
    "conditions": [{"op": "eq", "field": "cpu_arch", "value": "x86_64"}],
    "actions": [{"action": "add-trait", "name": "CUSTOM_X"}],
}


def test_the_shape_of_a_document_tells_its_format() -> None:
    assert exchange.written_in([IRONIC_RULE]) == exchange.IRONIC
    assert exchange.written_in({"inspection_rules": []}) == exchange.IRONIC
    assert exchange.written_in([OUR_RULE]) == exchange.INSPECTOR
    assert exchange.written_in(OUR_RULE) == exchange.INSPECTOR
    for unknown in ([], [{"description": "x"}], "text", [1]):
        assert exchange.written_in(unknown) is None


def test_a_refused_import_names_the_file_the_rule_and_the_format_it_looks_in() -> None:
    checks = validation.RuleChecks()
    with pytest.raises(exceptions.InvalidInput) as caught:
        exchange.to_create(
            [OUR_RULE, IRONIC_RULE], exchange.INSPECTOR, "r.json", checks
        )
    message = caught.value.message
    assert message.startswith("r.json: rule 1 (gpu): actions[0].action: ")
    assert message.endswith(
        "(it looks written in Ironic's rule language: try --format ironic; "
        "formats: inspector, ironic)"
    )
    with pytest.raises(exceptions.InvalidInput) as caught:
        exchange.to_create([OUR_RULE], exchange.IRONIC, "r.json", checks)
    assert caught.value.message.startswith("r.json: rule 0 (gpu): ")
    assert "try --format inspector; formats: inspector, ironic" in caught.value.message
    # a rule of the format asked for gets no hint, only its problem
    bad = {**OUR_RULE, "actions": [{"action": "nope"}]}
    with pytest.raises(exceptions.InvalidInput) as caught:
        exchange.to_create([bad], exchange.INSPECTOR, "r.json", checks)
    assert "r.json: rule 0 (gpu): actions[0].action: unknown action 'nope'" in (
        caught.value.message
    )
    assert "--format" not in caught.value.message
    with pytest.raises(exceptions.InvalidInput, match="try --format ironic"):
        exchange.to_create(IRONIC_RULE, exchange.INSPECTOR, "r.json", checks)


def test_the_manage_command_offers_every_format() -> None:
    from inspector.cmd import manage_rules

    assert manage_rules.RULE_FORMATS == exchange.FORMATS
