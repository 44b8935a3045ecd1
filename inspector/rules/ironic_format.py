"""Rules in Ironic's inspection-rule language, to and from ours.

Ironic (2025.1 and later) writes a condition as ``{op, args, loop,
multiple}`` where ``args`` names the values to compare, variables
included (``{"op": "eq", "args": {"values": ["{inventory[cpu][count]}",
"4"]}}``), and an action as ``{op, args, loop}``. Ours names one field and
the value it is compared with (``{"op": "eq", "field": "inventory.cpu.count",
"value": 4}``). :func:`to_ironic` and :func:`from_ironic` translate one
rule; a construct one side cannot express raises :class:`Untranslatable`
naming the rule and the construct: nothing is dropped. doc/rules.md keeps
the table of every construct.

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
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MAC = re.compile(r"^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$")


class Untranslatable(exceptions.InvalidInput):
    """A construct the other language cannot express."""


def _refuse(where: str, problem: str) -> Untranslatable:
    return Untranslatable(f"{where}: {problem}")


def rule_name(index: int, rule: Any) -> str:
    """How messages name a rule: its index, UUID and description."""
    if not isinstance(rule, dict):
        return f"rule {index}"
    named = [str(rule[k]) for k in ("uuid", "description") if rule.get(k)]
    return f"rule {index}" + (f" ({', '.join(named)})" if named else "")


def _lone(value: Any) -> templates.Reference | None:
    if not isinstance(value, str):
        return None
    template = templates.condition_template(value)
    return template.lone if template is not None else None


def _has_variable(value: Any) -> bool:
    return bool(templates.references(value, templates.condition_template))


# ---- ours -> Ironic ----


def _variable_of_path(field: str, where: str) -> str:
    """Our JSONPath field as Ironic's variable, or refused."""
    on_node = field.startswith("node://")
    path = field.removeprefix("node://").removeprefix("data://").removeprefix("$.")
    keys: list[str] = []
    for part in path.split("."):
        match = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)", part)
        if match is None:
            raise _refuse(
                where,
                f"field {field!r}: Ironic reads one value by a variable; "
                "only a plain path (a.b[0].c) translates, not wildcards or filters",
            )
        keys.append(match.group(1))
        keys.extend(re.findall(r"\[(\d+)\]", match.group(2)))
    if on_node:
        return "{node." + keys[0] + "".join(f"[{k}]" for k in keys[1:]) + "}"
    if keys[0] == "inventory" and len(keys) > 1:
        return "{inventory" + "".join(f"[{k}]" for k in keys[1:]) + "}"
    return "{plugin_data" + "".join(f"[{k}]" for k in keys) + "}"


def _ironic_variables(value: Any, where: str) -> Any:
    """Our variables in ``value`` as Ironic writes them."""
    if isinstance(value, dict):
        return {k: _ironic_variables(v, where) for k, v in value.items()}
    if isinstance(value, list):
        return [_ironic_variables(v, where) for v in value]
    if not isinstance(value, str):
        return value
    for ref in templates.references(value, templates.condition_template):
        if ref.root == "ports":
            raise _refuse(where, f"{{{ref.text}}}: Ironic has no ports variable")
        if ref.root == "data":
            value = value.replace("{" + ref.text, "{plugin_data" + ref.text[4:])
        if ref.root == "node" and ref.keys and not ref.text.startswith("node."):
            first, rest = ref.keys[0], ref.keys[1:]
            text = f"node.{first}" + "".join(f"[{k}]" for k in rest)
            value = value.replace("{" + ref.text + "}", "{" + text + "}")
    return value


def _as_text(value: Any) -> Any:
    """Ironic's variables come out as text: a number compared with one is
    written as text too (ours compares "4" and 4 as numbers)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def _condition_to_ironic(cond: dict[str, Any], where: str) -> dict[str, Any]:
    op, invert = cond["op"], bool(cond.get("invert"))
    if op in NEGATED:
        op, invert = NEGATED[op], not invert
    field = cond["field"]
    if field.startswith("{"):
        subject = _ironic_variables(field, where)
    else:
        subject = _variable_of_path(field, f"{where}.field")
    params = {k: v for k, v in cond.items() if k not in ("op", "field", "multiple")}
    params.pop("invert", None)
    loop = params.pop("loop", None)
    args: dict[str, Any]
    if op in ("eq", "lt", "gt"):
        value = params["value"]
        args = {"values": [subject, _as_text(value) if op == "eq" else value]}
    elif op == "in-net":
        args = {"address": subject, "subnet": params["value"]}
    elif op in ("matches", "contains"):
        if _has_variable(params["value"]) and loop is None:
            raise _refuse(
                f"{where}.value",
                "Ironic does not format a regular expression outside a loop",
            )
        args = {"value": subject, "regex": params["value"]}
    elif op == "one-of":
        if _has_variable(params["values"]) and loop is None:
            raise _refuse(
                f"{where}.values",
                "Ironic does not format one-of's values outside a loop",
            )
        args = {"value": subject, "values": [_as_text(v) for v in params["values"]]}
    elif op == "is-none":
        raise _refuse(f"{where}.op", f"is-none: {TEXT_NONE}")
    else:  # is-empty, is-true, is-false
        args = {"value": subject}
    out: dict[str, Any] = {
        "op": ("!" if invert else "") + op,
        "args": _ironic_variables(args, where),
    }
    multiple = cond.get("multiple", "any")
    if loop is not None:
        if not isinstance(loop, list):
            raise _refuse(
                f"{where}.loop",
                f"{loop!r}: {LOOP_VARIABLE}",
            )
        if multiple == "first":
            raise _refuse(
                f"{where}.multiple",
                "first: Ironic's 'first' in a loop holds when any item holds",
            )
        out["loop"] = loop
        out["multiple"] = multiple
    # without a loop the field is one plain path (wildcards are refused
    # above): one value, whatever ``multiple`` says
    return out


def _action_to_ironic(action: dict[str, Any], where: str) -> dict[str, Any]:
    name = action["action"]
    if name == "api-call":
        raise _refuse(where, API_CALL)
    params = {k: v for k, v in action.items() if k not in ("action", "loop")}
    loop = action.get("loop")
    if loop is not None and not isinstance(loop, list):
        raise _refuse(
            f"{where}.loop",
            f"{loop!r}: {LOOP_VARIABLE}",
        )
    if name == "fail":
        params = {"msg": params.pop("message"), **params}
    if name in ("set-port-attribute", "extend-port-attribute", "del-port-attribute"):
        port = params.get("port_id")
        if isinstance(port, str) and _MAC.match(port):
            raise _refuse(
                f"{where}.port_id",
                f"{port}: Ironic names a port by its UUID only, not its MAC",
            )
    if loop is None:
        for key, value in params.items():
            if key not in ACTION_TEXT_ARGS and _has_variable(value):
                raise _refuse(
                    f"{where}.{key}",
                    f"Ironic does not format {key!r} of {name} outside a loop",
                )
    out: dict[str, Any] = {"op": name, "args": _ironic_variables(params, where)}
    if loop is not None:
        out["loop"] = loop
    return out


def to_ironic(rule: dict[str, Any], name: str = "") -> dict[str, Any]:
    """Our rule (stored or validated) as Ironic's ``POST
    /v1/inspection_rules`` takes it.

    :raises Untranslatable: naming the rule and the construct.
    """
    name = name or f"rule {rule.get('uuid')}"
    description = rule.get("description")
    if description is not None and len(description) > DESCRIPTION_MAX:
        raise _refuse(
            f"{name}: description",
            f"longer than Ironic's {DESCRIPTION_MAX} characters",
        )
    conditions = [
        _condition_to_ironic(c, f"{name}: conditions[{i}]")
        for i, c in enumerate(rule.get("conditions") or [])
    ]
    if rule.get("scope"):
        conditions.insert(
            0, {"op": "eq", "args": {"values": [SCOPE_VARIABLE, rule["scope"]]}}
        )
    out = {
        "uuid": rule["uuid"],
        "description": description,
        "priority": int(rule.get("priority") or 0),
        "sensitive": bool(rule.get("sensitive")),
        "phase": PHASE,
        "conditions": conditions,
        "actions": [
            _action_to_ironic(a, f"{name}: actions[{i}]")
            for i, a in enumerate(rule["actions"])
        ],
    }
    return out


# ---- Ironic -> ours ----


def _args(
    raw: dict[str, Any], names: tuple[str, ...], where: str, op: str
) -> dict[str, Any]:
    """An operation's ``args`` as an object (a list read positionally)."""
    args = raw.get("args", {})
    if isinstance(args, list):
        if names == ("values",):
            # {"values": [a, b]} or [a, b]; Ironic's own [[a, b]] too
            if len(args) == 1 and isinstance(args[0], list):
                return {"values": args[0]}
            return {"values": args}
        if len(args) > len(names):
            raise _refuse(
                f"{where}.args",
                f"{len(args)} arguments; {op} takes {', '.join(names)}",
            )
        return dict(zip(names, args, strict=False))
    if not isinstance(args, dict):
        raise _refuse(f"{where}.args", "must be a list or an object")
    unknown = sorted(set(args) - set(names))
    if unknown:
        raise _refuse(
            f"{where}.args.{unknown[0]}",
            f"not an argument of {op} (takes {', '.join(names)})",
        )
    return dict(args)


def _field_of(value: Any, where: str, looping: bool) -> str:
    """The field of our condition for Ironic's compared value: a plain path
    where the variable is one (a missing key then makes the rule not apply,
    as an unresolved variable does in Ironic), else the variable."""
    ref = _lone(value)
    if ref is None:
        raise _refuse(
            where,
            f"{value!r}: ours compares a value read from the data or the node; "
            "give one variable ({inventory[...]}, {plugin_data[...]}, {node.x})",
        )
    keys = [str(k) for k in ref.keys]
    plain = all(_NAME.match(k) or k.isdigit() for k in keys)
    if not plain or ref.root in ("item", "ports") or looping or not keys:
        return str(value)
    path = ""
    for key in keys:
        path += f"[{key}]" if key.isdigit() else f".{key}"
    path = path.lstrip(".")
    if ref.root == "inventory":
        return "inventory." + path if not path.startswith("[") else "inventory" + path
    if ref.root == "node":
        return "node://" + path
    if ref.root in ("plugin_data", "data") and not path.startswith("["):
        return path
    return str(value)


def _loop_from_ironic(raw: dict[str, Any], where: str) -> Any:
    loop = raw.get("loop")
    if loop is None or loop == [] or loop == {}:
        return None
    if isinstance(loop, dict):
        return [loop]  # Ironic runs a dict loop once, with the dict as the item
    if isinstance(loop, list):
        return loop
    raise _refuse(f"{where}.loop", "must be a list or an object")


def _negation(raw_op: Any, where: str) -> tuple[str, bool]:
    if not isinstance(raw_op, str):
        raise _refuse(f"{where}.op", "must be a string")
    op = raw_op.strip()
    if op.count("!") > 1:
        raise _refuse(f"{where}.op", f"{raw_op!r}: one '!' at most")
    negated = op.startswith("!")
    return op.lstrip("!").strip(), negated


def _condition_from_ironic(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise _refuse(where, "must be an object")
    unknown = sorted(set(raw) - {"op", "args", "loop", "multiple"})
    if unknown:
        raise _refuse(f"{where}.{unknown[0]}", "not part of Ironic's condition")
    op, negated = _negation(raw.get("op"), where)
    if op not in CONDITION_ARGS:
        raise _refuse(
            f"{where}.op",
            f"{op!r} is not one of Ironic's operators ({', '.join(CONDITION_ARGS)})",
        )
    args = _args(raw, CONDITION_ARGS[op], where, op)
    loop = _loop_from_ironic(raw, where)
    looping = loop is not None
    out: dict[str, Any] = {}
    if op in ("eq", "lt", "gt"):
        values = args.get("values")
        if not isinstance(values, list) or len(values) != 2:
            raise _refuse(
                f"{where}.args.values",
                f"{values!r}: ours compares two values, one of them a variable",
            )
        first, second = values
        if _lone(first) is None and _lone(second) is not None:
            first, second, op = second, first, FLIPPED[op]
        out["field"] = _field_of(first, f"{where}.args.values[0]", looping)
        out["value"] = second
    else:
        subject = {"in-net": "address"}.get(op, "value")
        if subject not in args:
            raise _refuse(f"{where}.args", f"{op} needs {subject!r}")
        if op == "is-none":
            raise _refuse(f"{where}.op", f"is-none: {TEXT_NONE}")
        out["field"] = _field_of(args[subject], f"{where}.args.{subject}", looping)
        if op in AS_TEXT:
            op, out["value"] = "matches", AS_TEXT[op]
        elif op == "in-net":
            out["value"] = args.get("subnet")
        elif op in ("matches", "contains"):
            out["value"] = args.get("regex")
        elif op == "one-of":
            out["values"] = args.get("values", [])
    multiple = raw.get("multiple", "any")
    if looping:
        if multiple in ("first", "last"):
            raise _refuse(
                f"{where}.multiple",
                f"{multiple}: Ironic's 'first' holds when any item holds and "
                "'last' judges the last item; ours has neither",
            )
        out["loop"] = loop
    elif multiple not in ("any", "all", "first", "last"):
        raise _refuse(f"{where}.multiple", f"{multiple!r} is not one of Ironic's")
    # without a loop Ironic reads one value: its multiple changes nothing
    return {
        "op": ("!" if negated else "") + op,
        **out,
        "multiple": multiple if looping else "any",
    }


def _path_from_ironic(path: Any) -> Any:
    """Ironic's path (``a/b``, ``/a/b`` or ``a.b``) as our JSON pointer."""
    if not isinstance(path, str) or _has_variable(path):
        return path
    parts = path.strip("/").split("/") if "/" in path else path.split(".")
    return "/" + "/".join(parts)


def _action_from_ironic(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise _refuse(where, "must be an object")
    unknown = sorted(set(raw) - {"op", "args", "loop"})
    if unknown:
        raise _refuse(f"{where}.{unknown[0]}", "not part of Ironic's action")
    name = raw.get("op")
    if name == "api-call":
        raise _refuse(where, API_CALL)
    if name not in ACTION_ARGS:
        raise _refuse(
            f"{where}.op",
            f"{name!r} is not one of Ironic's actions ({', '.join(ACTION_ARGS)})",
        )
    names = PLUGIN_DATA_ORDER.get(name, ACTION_ARGS[name])
    args = _args(raw, names, where, name)
    if args.get(PLUGIN_DATA) in ({}, None):
        args.pop(PLUGIN_DATA, None)  # Ironic's place for the data it runs on
    elif PLUGIN_DATA in args:
        raise _refuse(f"{where}.args.{PLUGIN_DATA}", "Ironic fills it: must be {}")
    if name == "fail":
        args = {"message": args.pop("msg", None), **args}
    if "path" in args and name not in (
        "set-plugin-data",
        "extend-plugin-data",
        "unset-plugin-data",
    ):
        args["path"] = _path_from_ironic(args["path"])
    out: dict[str, Any] = {"action": name, **args}
    loop = _loop_from_ironic(raw, where)
    if loop is not None:
        out["loop"] = loop
    return out


RULE_KEYS = frozenset(
    {
        "uuid",
        "description",
        "priority",
        "sensitive",
        "phase",
        "conditions",
        "actions",
        # what Ironic's API answers besides the rule
        "links",
        "created_at",
        "updated_at",
    }
)


def from_ironic(rule: Any, name: str) -> dict[str, Any]:
    """Ironic's rule (its API's answer or an item of its built-in YAML) as
    a body for :func:`inspector.rules.validation.validate`.

    :raises Untranslatable: naming the rule (``name``) and the construct.
    """
    if not isinstance(rule, dict):
        raise _refuse(name, "must be an object")
    unknown = sorted(set(rule) - RULE_KEYS)
    if unknown:
        raise _refuse(f"{name}: {unknown[0]}", "not a field of Ironic's rules")
    phase = rule.get("phase") or PHASE
    if phase != PHASE:
        raise _refuse(f"{name}: phase", f"{phase!r}: ours runs rules in one phase")
    if rule.get("actions") is None and rule.get("sensitive"):
        raise _refuse(
            f"{name}: actions",
            "Ironic's API does not show a sensitive rule's conditions and "
            "actions: import it from the file it was created from",
        )
    if rule.get("actions") is None:
        raise _refuse(
            f"{name}: actions",
            "missing: list Ironic's rules with ?detail=true to get them",
        )
    conditions = rule.get("conditions") or []
    actions = rule.get("actions")
    if not isinstance(conditions, list):
        raise _refuse(f"{name}: conditions", "must be a list")
    if not isinstance(actions, list):
        raise _refuse(f"{name}: actions", "must be a list")
    out: dict[str, Any] = {
        "conditions": [
            _condition_from_ironic(c, f"{name}: conditions[{i}]")
            for i, c in enumerate(conditions)
        ],
        "actions": [
            _action_from_ironic(a, f"{name}: actions[{i}]")
            for i, a in enumerate(actions)
        ],
    }
    for key in ("uuid", "description", "priority", "sensitive"):
        if rule.get(key) is not None:
            out[key] = rule[key]
    return out


def rules_of(document: Any, source: str) -> list[Any]:
    """The rules of an Ironic document: a list (its built-in YAML, or what
    :func:`to_ironic` wrote), or its API's answer ``{"inspection_rules":
    [...]}``, or one rule."""
    if isinstance(document, dict) and "inspection_rules" in document:
        document = document["inspection_rules"]
    elif isinstance(document, dict) and "actions" in document:
        document = [document]
    if not isinstance(document, list):
        raise exceptions.InvalidInput(
            f"{source} must hold a list of Ironic inspection rules or "
            'Ironic\'s answer {"inspection_rules": [...]}'
        )
    return document
