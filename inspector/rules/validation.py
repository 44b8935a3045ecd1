"""Rules as the API accepts them: validated when created, not when they run.

A rule is ``{uuid, description, scope, conditions: [...], actions: [...]}``.
A condition is ``{op, field, multiple, invert, **params}``: ``field`` is a
JSONPath into the introspection data, or into the Ironic node with a
``node://`` prefix (``data://`` names the data explicitly). ``multiple``
says how a path that finds several values is judged: ``any`` (default),
``all``, or only the ``first``. An action is ``{action, **params}``; its
string parameters are formatted with the data first (``{data[...]}``).
"""

import functools
import uuid as uuid_mod
from typing import Any

import jsonpath_ng
import jsonschema
import stevedore

from inspector import exceptions
from inspector.rules.actions import Action
from inspector.rules.conditions import Condition

CONDITIONS = "ironic_inspector.rules.conditions"
ACTIONS = "ironic_inspector.rules.actions"
MULTIPLE = ("any", "all", "first")
SCOPE_MAX = 255
DESCRIPTION_MAX = 65535
NODE_PREFIX = "node://"
DATA_PREFIX = "data://"

CONDITION_KEYS = {"op", "field", "multiple", "invert"}


@functools.cache
def _plugins(namespace: str) -> dict[str, Any]:
    manager: stevedore.ExtensionManager[Any] = stevedore.ExtensionManager(
        namespace, invoke_on_load=True
    )
    return {ext.name: ext.obj for ext in manager}


def conditions() -> dict[str, Condition]:
    return _plugins(CONDITIONS)


def actions() -> dict[str, Action]:
    return _plugins(ACTIONS)


def _invalid(where: str, problem: str) -> exceptions.InvalidInput:
    return exceptions.InvalidInput(f"Invalid rule: {where}: {problem}")


@functools.lru_cache(maxsize=1024)
def parse_path(field: str) -> Any:
    """The JSONPath of a condition's field, without its prefix.

    :raises ValueError: not a JSONPath.
    """
    path = field.removeprefix(NODE_PREFIX).removeprefix(DATA_PREFIX)
    try:
        return jsonpath_ng.parse(path)
    except Exception as exc:  # the parser raises several kinds
        raise ValueError(str(exc)) from None


def _check_path(where: str, field: Any) -> None:
    if not isinstance(field, str) or not field.strip():
        raise _invalid(where, "must be a non-empty string (a JSONPath)")
    try:
        parse_path(field)
    except ValueError as exc:
        raise _invalid(where, f"{field!r} is not a JSONPath: {exc}") from None


def _check_params(where: str, plugin: Any, params: dict[str, Any]) -> None:
    try:
        jsonschema.validate(params, plugin.PARAMS)
    except jsonschema.ValidationError as exc:
        at = ".".join(str(p) for p in exc.absolute_path)
        raise _invalid(f"{where}{'.' + at if at else ''}", exc.message) from None
    try:
        plugin.validate(params)
    except ValueError as exc:
        raise _invalid(where, str(exc)) from None


def _condition(index: int, raw: Any) -> dict[str, Any]:
    where = f"conditions[{index}]"
    if not isinstance(raw, dict):
        raise _invalid(where, "must be an object")
    op = raw.get("op")
    plugin = conditions().get(op) if isinstance(op, str) else None
    if plugin is None:
        raise _invalid(
            f"{where}.op",
            f"unknown condition {op!r}; available: {', '.join(sorted(conditions()))}",
        )
    _check_path(f"{where}.field", raw.get("field"))
    multiple = raw.get("multiple", "any")
    if multiple not in MULTIPLE:
        raise _invalid(
            f"{where}.multiple", f"{multiple!r} is not one of {', '.join(MULTIPLE)}"
        )
    invert = raw.get("invert", False)
    if not isinstance(invert, bool):
        raise _invalid(f"{where}.invert", "must be true or false")
    params = {k: v for k, v in raw.items() if k not in CONDITION_KEYS}
    _check_params(where, plugin, params)
    return {
        "op": op,
        "field": raw["field"],
        "multiple": multiple,
        "invert": invert,
        **params,
    }


def _action(index: int, raw: Any) -> dict[str, Any]:
    where = f"actions[{index}]"
    if not isinstance(raw, dict):
        raise _invalid(where, "must be an object")
    name = raw.get("action")
    plugin = actions().get(name) if isinstance(name, str) else None
    if plugin is None:
        raise _invalid(
            f"{where}.action",
            f"unknown action {name!r}; available: {', '.join(sorted(actions()))}",
        )
    params = {k: v for k, v in raw.items() if k != "action"}
    _check_params(where, plugin, params)
    return {"action": name, **params}


def _optional_text(body: dict[str, Any], key: str, limit: int) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _invalid(key, "must be a string")
    if len(value) > limit:
        raise _invalid(key, f"is longer than {limit} characters")
    return value


def validate(body: dict[str, Any]) -> dict[str, Any]:
    """A rule from a request body, with defaults filled in.

    :raises InvalidInput: naming the first bad field.
    """
    known = {"uuid", "description", "scope", "conditions", "actions"}
    unknown = sorted(set(body) - known)
    if unknown:
        allowed = ", ".join(sorted(known))
        raise _invalid(unknown[0], f"unknown field; allowed: {allowed}")
    rule_id = body.get("uuid") or str(uuid_mod.uuid4())
    try:
        rule_id = str(uuid_mod.UUID(str(rule_id)))
    except ValueError:
        raise _invalid("uuid", f"{rule_id!r} is not a UUID") from None
    raw_conditions = body.get("conditions")
    if raw_conditions is None:
        raw_conditions = []
    if not isinstance(raw_conditions, list):
        raise _invalid("conditions", "must be a list")
    raw_actions = body.get("actions")
    if not isinstance(raw_actions, list) or not raw_actions:
        raise _invalid("actions", "at least one action is required")
    return {
        "uuid": rule_id,
        "description": _optional_text(body, "description", DESCRIPTION_MAX),
        "scope": _optional_text(body, "scope", SCOPE_MAX),
        "conditions": [_condition(i, c) for i, c in enumerate(raw_conditions)],
        "actions": [_action(i, a) for i, a in enumerate(raw_actions)],
    }
