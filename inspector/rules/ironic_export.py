"""Our rules in Ironic's inspection-rule language (``rules export --format
ironic``): :func:`to_ironic`, or :class:`Untranslatable` naming the construct
(the vocabulary of both sides: :mod:`inspector.rules.ironic_format`)."""

import re
from typing import Any

from inspector.rules import ironic_format as words
from inspector.rules import templates


def _variable_of_path(field: str, where: str) -> str:
    """Our JSONPath field as Ironic's variable, or refused."""
    on_node = field.startswith("node://")
    path = field.removeprefix("node://").removeprefix("data://").removeprefix("$.")
    keys: list[str] = []
    for part in path.split("."):
        match = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)", part)
        if match is None:
            raise words.refuse(
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
            raise words.refuse(where, f"{{{ref.text}}}: Ironic has no ports variable")
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
    if op in words.NEGATED:
        op, invert = words.NEGATED[op], not invert
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
        if words.has_variable(params["value"]) and loop is None:
            raise words.refuse(
                f"{where}.value",
                "Ironic does not format a regular expression outside a loop",
            )
        args = {"value": subject, "regex": params["value"]}
    elif op == "one-of":
        if words.has_variable(params["values"]) and loop is None:
            raise words.refuse(
                f"{where}.values",
                "Ironic does not format one-of's values outside a loop",
            )
        args = {"value": subject, "values": [_as_text(v) for v in params["values"]]}
    elif op == "is-none":
        raise words.refuse(f"{where}.op", f"is-none: {words.TEXT_NONE}")
    else:  # is-empty, is-true, is-false
        args = {"value": subject}
    out: dict[str, Any] = {
        "op": ("!" if invert else "") + op,
        "args": _ironic_variables(args, where),
    }
    multiple = cond.get("multiple", "any")
    if loop is not None:
        if not isinstance(loop, list):
            raise words.refuse(
                f"{where}.loop",
                f"{loop!r}: {words.LOOP_VARIABLE}",
            )
        if multiple == "first":
            raise words.refuse(
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
        raise words.refuse(where, words.API_CALL)
    params = {k: v for k, v in action.items() if k not in ("action", "loop")}
    loop = action.get("loop")
    if loop is not None and not isinstance(loop, list):
        raise words.refuse(
            f"{where}.loop",
            f"{loop!r}: {words.LOOP_VARIABLE}",
        )
    if name == "fail":
        params = {"msg": params.pop("message"), **params}
    if name in ("set-port-attribute", "extend-port-attribute", "del-port-attribute"):
        port = params.get("port_id")
        if isinstance(port, str) and words.MAC.match(port):
            raise words.refuse(
                f"{where}.port_id",
                f"{port}: Ironic names a port by its UUID only, not its MAC",
            )
    if loop is None:
        for key, value in params.items():
            if key not in words.ACTION_TEXT_ARGS and words.has_variable(value):
                raise words.refuse(
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

    :raises words.Untranslatable: naming the rule and the construct.
    """
    name = name or f"rule {rule.get('uuid')}"
    description = rule.get("description")
    if description is not None and len(description) > words.DESCRIPTION_MAX:
        raise words.refuse(
            f"{name}: description",
            f"longer than Ironic's {words.DESCRIPTION_MAX} characters",
        )
    conditions = [
        _condition_to_ironic(c, f"{name}: conditions[{i}]")
        for i, c in enumerate(rule.get("conditions") or [])
    ]
    if rule.get("scope"):
        conditions.insert(
            0, {"op": "eq", "args": {"values": [words.SCOPE_VARIABLE, rule["scope"]]}}
        )
    out = {
        "uuid": rule["uuid"],
        "description": description,
        "priority": int(rule.get("priority") or 0),
        "sensitive": bool(rule.get("sensitive")),
        "phase": words.PHASE,
        "conditions": conditions,
        "actions": [
            _action_to_ironic(a, f"{name}: actions[{i}]")
            for i, a in enumerate(rule["actions"])
        ],
    }
    return out
