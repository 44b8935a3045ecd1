"""Ironic's inspection-rule language beside ours: the vocabulary both
directions share (its operators and actions with their arguments, the
constructs that differ, how messages name a rule).

Ironic (2025.1 and later) writes a condition as ``{op, args, loop,
multiple}`` where ``args`` names the values to compare, variables
included (``{"op": "eq", "args": {"values": ["{inventory[cpu][count]}",
"4"]}}``), and an action as ``{op, args, loop}``. Ours names one field and
the value it is compared with (``{"op": "eq", "field": "inventory.cpu.count",
"value": 4}``). :mod:`inspector.rules.ironic_export` and
:mod:`inspector.rules.ironic_import` translate one rule each way; a
construct one side cannot express raises :class:`Untranslatable` naming the
rule and the construct: nothing is dropped. doc/rules.md keeps the table
of every construct.

``args`` may be a list (Ironic reads it positionally, in the order of its
plugins' parameters) or an object; ``{"values": [...]}`` and a plain list
of values are both read for ``eq``, ``lt`` and ``gt``.
"""

import re
from typing import Any

from inspector import exceptions
from inspector.rules import templates

PHASE = "main"
DESCRIPTION_MAX = 255
"""Ironic's limit on a rule's description."""
SCOPE_VARIABLE = "{node.properties[inspection_scope]}"
"""How an exported rule keeps our ``scope``: a condition on the node."""

CONDITION_ARGS: dict[str, tuple[str, ...]] = {
    "eq": ("values",),
    "lt": ("values",),
    "gt": ("values",),
    "is-empty": ("value",),
    "in-net": ("address", "subnet"),
    "matches": ("value", "regex"),
    "contains": ("value", "regex"),
    "one-of": ("value", "values"),
    "is-none": ("value",),
    "is-true": ("value",),
    "is-false": ("value",),
}
"""Ironic's operators and their arguments, in its positional order."""

ACTION_ARGS: dict[str, tuple[str, ...]] = {
    "fail": ("msg",),
    "log": ("msg", "level"),
    "set-attribute": ("path", "value"),
    "extend-attribute": ("path", "value", "unique"),
    "del-attribute": ("path",),
    "add-trait": ("name",),
    "remove-trait": ("name",),
    "set-capability": ("name", "value"),
    "unset-capability": ("name",),
    "set-plugin-data": ("path", "value"),
    "extend-plugin-data": ("path", "value", "unique"),
    "unset-plugin-data": ("path",),
    "set-port-attribute": ("port_id", "path", "value"),
    "extend-port-attribute": ("port_id", "path", "value", "unique"),
    "del-port-attribute": ("port_id", "path"),
}
"""Ironic's actions we translate (``api-call`` is not one: below)."""

PLUGIN_DATA = "plugin_data"
PLUGIN_DATA_ORDER: dict[str, tuple[str, ...]] = {
    "set-plugin-data": ("path", "value", PLUGIN_DATA),
    "extend-plugin-data": ("path", "value", PLUGIN_DATA, "unique"),
    "unset-plugin-data": ("path", PLUGIN_DATA),
}
"""Ironic's plugin-data actions as it reads and stores their ``args``: with
a ``plugin_data`` argument (``{}``, the data filled in when they run), which
its API answers; ours takes the rest."""

API_CALL = (
    "api-call: Ironic's is a GET with retries and no body, ours a POST of a "
    "body to an allowed host; neither expresses the other"
)
LOOP_VARIABLE = "Ironic loops over a list written in the rule, not a variable"
TEXT_NONE = (
    "Ironic formats its variables as text, so is-none of one never holds "
    "there; ours holds on a missing or null value"
)
AS_TEXT = {"is-true": "(?i)(true|yes)", "is-false": "(?i)(no|false)"}
"""Ironic's is-true and is-false judge the text of their variable (``True``
comes out as ``"True"``, 1 as ``"1"``): imported as the regular expression
that holds on exactly the same text."""
NEGATED = {"ne": "eq", "le": "gt", "ge": "lt"}
"""Our operators Ironic has only negated: ``ne`` is ``!eq`` and so on."""
FLIPPED = {"lt": "gt", "gt": "lt", "eq": "eq"}
"""A comparison with its sides swapped."""
TEXT_ARGS = {"value", "values", "address", "subnet"}
"""The condition arguments Ironic formats outside a loop."""
ACTION_TEXT_ARGS = {"value", "msg", "url"}
"""The action arguments Ironic formats outside a loop."""
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAC = re.compile(r"^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$")


class Untranslatable(exceptions.InvalidInput):
    """A construct the other language cannot express."""


def refuse(where: str, problem: str) -> Untranslatable:
    return Untranslatable(f"{where}: {problem}")


def rule_name(index: int, rule: Any) -> str:
    """How messages name a rule: its index, UUID and description."""
    if not isinstance(rule, dict):
        return f"rule {index}"
    named = [str(rule[k]) for k in ("uuid", "description") if rule.get(k)]
    return f"rule {index}" + (f" ({', '.join(named)})" if named else "")


def lone(value: Any) -> templates.Reference | None:
    if not isinstance(value, str):
        return None
    template = templates.condition_template(value)
    return template.lone if template is not None else None


def has_variable(value: Any) -> bool:
    return bool(templates.references(value, templates.condition_template))
