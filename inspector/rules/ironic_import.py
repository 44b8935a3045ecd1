"""Ironic's inspection rules as ours (``rules import --format ironic``, and
Ironic's built-in rules file): :func:`from_ironic` and :func:`rules_of`, or
:class:`Untranslatable` naming the construct (the vocabulary of both sides:
:mod:`inspector.rules.ironic_format`)."""

from typing import Any

from inspector import exceptions
from inspector.rules import ironic_format as words


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
            raise words.refuse(
                f"{where}.args",
                f"{len(args)} arguments; {op} takes {', '.join(names)}",
            )
        return dict(zip(names, args, strict=False))
    if not isinstance(args, dict):
        raise words.refuse(f"{where}.args", "must be a list or an object")
    unknown = sorted(set(args) - set(names))
    if unknown:
        raise words.refuse(
            f"{where}.args.{unknown[0]}",
            f"not an argument of {op} (takes {', '.join(names)})",
        )
    return dict(args)


def _field_of(value: Any, where: str, looping: bool) -> str:
    """The field of our condition for Ironic's compared value: a plain path
    where the variable is one (a missing key then makes the rule not apply,
    as an unresolved variable does in Ironic), else the variable."""
    ref = words.lone(value)
    if ref is None:
        raise words.refuse(
            where,
            f"{value!r}: ours compares a value read from the data or the node; "
            "give one variable ({inventory[...]}, {plugin_data[...]}, {node.x})",
        )
    keys = [str(k) for k in ref.keys]
    plain = all(words.NAME.match(k) or k.isdigit() for k in keys)
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
    raise words.refuse(f"{where}.loop", "must be a list or an object")


def _negation(raw_op: Any, where: str) -> tuple[str, bool]:
    if not isinstance(raw_op, str):
        raise words.refuse(f"{where}.op", "must be a string")
    op = raw_op.strip()
    if op.count("!") > 1:
        raise words.refuse(f"{where}.op", f"{raw_op!r}: one '!' at most")
    negated = op.startswith("!")
    return op.lstrip("!").strip(), negated


def _condition_from_ironic(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise words.refuse(where, "must be an object")
    unknown = sorted(set(raw) - {"op", "args", "loop", "multiple"})
    if unknown:
        raise words.refuse(f"{where}.{unknown[0]}", "not part of Ironic's condition")
    op, negated = _negation(raw.get("op"), where)
    if op not in words.CONDITION_ARGS:
        raise words.refuse(
            f"{where}.op",
            f"{op!r} is not one of Ironic's operators "
            f"({', '.join(words.CONDITION_ARGS)})",
        )
    args = _args(raw, words.CONDITION_ARGS[op], where, op)
    loop = _loop_from_ironic(raw, where)
    looping = loop is not None
    out: dict[str, Any] = {}
    if op in ("eq", "lt", "gt"):
        values = args.get("values")
        if not isinstance(values, list) or len(values) != 2:
            raise words.refuse(
                f"{where}.args.values",
                f"{values!r}: ours compares two values, one of them a variable",
            )
        first, second = values
        if words.lone(first) is None and words.lone(second) is not None:
            first, second, op = second, first, words.FLIPPED[op]
        out["field"] = _field_of(first, f"{where}.args.values[0]", looping)
        out["value"] = second
    else:
        subject = {"in-net": "address"}.get(op, "value")
        if subject not in args:
            raise words.refuse(f"{where}.args", f"{op} needs {subject!r}")
        if op == "is-none":
            raise words.refuse(f"{where}.op", f"is-none: {words.TEXT_NONE}")
        out["field"] = _field_of(args[subject], f"{where}.args.{subject}", looping)
        if op in words.AS_TEXT:
            op, out["value"] = "matches", words.AS_TEXT[op]
        elif op == "in-net":
            out["value"] = args.get("subnet")
        elif op in ("matches", "contains"):
            out["value"] = args.get("regex")
        elif op == "one-of":
            out["values"] = args.get("values", [])
    multiple = raw.get("multiple", "any")
    if looping:
        if multiple in ("first", "last"):
            raise words.refuse(
                f"{where}.multiple",
                f"{multiple}: Ironic's 'first' holds when any item holds and "
                "'last' judges the last item; ours has neither",
            )
        out["loop"] = loop
    elif multiple not in ("any", "all", "first", "last"):
        raise words.refuse(f"{where}.multiple", f"{multiple!r} is not one of Ironic's")
    # without a loop Ironic reads one value: its multiple changes nothing
    return {
        "op": ("!" if negated else "") + op,
        **out,
        "multiple": multiple if looping else "any",
    }


def _path_from_ironic(path: Any) -> Any:
    """Ironic's path (``a/b``, ``/a/b`` or ``a.b``) as our JSON pointer."""
    if not isinstance(path, str) or words.has_variable(path):
        return path
    parts = path.strip("/").split("/") if "/" in path else path.split(".")
    return "/" + "/".join(parts)


def _action_from_ironic(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise words.refuse(where, "must be an object")
    unknown = sorted(set(raw) - {"op", "args", "loop"})
    if unknown:
        raise words.refuse(f"{where}.{unknown[0]}", "not part of Ironic's action")
    name = raw.get("op")
    if name == "api-call":
        raise words.refuse(where, words.API_CALL)
    if name not in words.ACTION_ARGS:
        raise words.refuse(
            f"{where}.op",
            f"{name!r} is not one of Ironic's actions ({', '.join(words.ACTION_ARGS)})",
        )
    names = words.PLUGIN_DATA_ORDER.get(name, words.ACTION_ARGS[name])
    args = _args(raw, names, where, name)
    if args.get(words.PLUGIN_DATA) in ({}, None):
        args.pop(words.PLUGIN_DATA, None)  # Ironic's place for the data it runs on
    elif words.PLUGIN_DATA in args:
        raise words.refuse(
            f"{where}.args.{words.PLUGIN_DATA}", "Ironic fills it: must be {}"
        )
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

    :raises words.Untranslatable: naming the rule (``name``) and the construct.
    """
    if not isinstance(rule, dict):
        raise words.refuse(name, "must be an object")
    unknown = sorted(set(rule) - RULE_KEYS)
    if unknown:
        raise words.refuse(f"{name}: {unknown[0]}", "not a field of Ironic's rules")
    phase = rule.get("phase") or words.PHASE
    if phase != words.PHASE:
        raise words.refuse(f"{name}: phase", f"{phase!r}: ours runs rules in one phase")
    if rule.get("actions") is None and rule.get("sensitive"):
        raise words.refuse(
            f"{name}: actions",
            "Ironic's API does not show a sensitive rule's conditions and "
            "actions: import it from the file it was created from",
        )
    if rule.get("actions") is None:
        raise words.refuse(
            f"{name}: actions",
            "missing: list Ironic's rules with ?detail=true to get them",
        )
    conditions = rule.get("conditions") or []
    actions = rule.get("actions")
    if not isinstance(conditions, list):
        raise words.refuse(f"{name}: conditions", "must be a list")
    if not isinstance(actions, list):
        raise words.refuse(f"{name}: actions", "must be a list")
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
