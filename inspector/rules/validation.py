"""Rules as the API accepts them: validated when created, not when they run.

A rule is ``{uuid, description, scope, priority, sensitive, conditions:
[...], actions: [...]}``. A condition is ``{op, field, multiple, invert,
**params}``: ``field`` is a JSONPath into the introspection data, or into
the Ironic node with a ``node://`` prefix (``data://`` names the data
explicitly), or (API 1.24) a variable (``{inventory[...]}``,
:mod:`inspector.rules.templates`). ``multiple`` says how a path that finds
several values is judged: ``any`` (default), ``all``, or only the
``first``. An action is ``{action, **params}``; its string parameters are
formatted first (``{data[...]}``, and from 1.24 the other variables).

From API 1.24: ``priority`` (0-9999, default 0: higher runs first),
``sensitive``, ``!op`` (the same as ``invert: true``), ``loop`` on a
condition or an action (a list, or one variable that is a list at run
time; ``{item}`` is its current item), variables in condition values.
A request below 1.24 that uses one of them is refused naming it: a v1
client never sends them, and ignoring one (a ``sensitive`` flag above
all) would store a rule that is not what was asked.
"""

import dataclasses
import functools
import uuid as uuid_mod
from typing import Any

import jsonpath_ng
import jsonschema
import stevedore

from inspector import exceptions
from inspector.rules import api_call, templates
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
LOOP = "loop"
"""A condition's or an action's loop, kept with its parameters."""
PRIORITY_MAX = 9999
LANGUAGE = 2
"""A rule's ``language``: 1 for rules created below API 1.24 (their
condition values are never formatted, as in v1), 2 from 1.24."""
NEW_SINCE = "1.24"
NEGATION = "!"

_LOOP = {
    "type": ["array", "string"],
    "description": "from 1.24: a list, or one variable that is a list",
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "uuid": {"type": ["string", "null"], "format": "uuid"},
        "description": {"type": ["string", "null"], "maxLength": DESCRIPTION_MAX},
        "scope": {"type": ["string", "null"], "maxLength": SCOPE_MAX},
        "priority": {
            "type": "integer",
            "minimum": 0,
            "maximum": PRIORITY_MAX,
            "description": "from 1.24; higher runs first",
        },
        "sensitive": {"type": "boolean", "description": "from 1.24"},
        "conditions": {
            "type": ["array", "null"],
            "items": {
                "type": "object",
                "properties": {
                    "op": {"type": "string"},
                    "field": {"type": "string", "minLength": 1},
                    "multiple": {"enum": list(MULTIPLE)},
                    "invert": {"type": "boolean"},
                    LOOP: _LOOP,
                },
                "required": ["op", "field"],
            },
        },
        "actions": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {"action": {"type": "string"}, LOOP: _LOOP},
                "required": ["action"],
            },
        },
    },
    "required": ["actions"],
    "additionalProperties": False,
}
"""A rule's fields as the OpenAPI document shows them (POST /v1/rules);
:func:`validate` refuses any other field and judges the rest (the plugins'
parameters, the API version, the JSONPaths and variables)."""


@dataclasses.dataclass(frozen=True)
class RuleChecks:
    """What validation checks beyond the rule itself."""

    new_language: bool = True
    """The request's API version has the 1.24 constructs."""
    allowed_hosts: tuple[str, ...] | None = None
    """``[rules]api_call_allowed_hosts``; None: not checked (a stored rule)."""
    built_in: bool = False
    """A rule of ``[rules]built_in_rules``: any integer priority (as
    Ironic's built-in rules), so one can run before or after every stored
    rule."""


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


def field_template(field: str) -> templates.Template | None:
    """The variable a condition's field names (``{inventory[...]}``), or
    None when the field is a JSONPath."""
    if not field.startswith("{"):
        return None
    return templates.condition_template(field)


def _check_path(where: str, field: Any, settings: RuleChecks) -> None:
    if not isinstance(field, str) or not field.strip():
        raise _invalid(where, "must be a non-empty string (a JSONPath)")
    if field_template(field) is not None:
        _needs_new(where, settings, "a variable as the field")
        return
    try:
        parse_path(field)
    except ValueError as exc:
        raise _invalid(where, f"{field!r} is not a JSONPath: {exc}") from None


def _needs_new(where: str, settings: RuleChecks, what: str) -> None:
    if not settings.new_language:
        raise _invalid(where, f"{what} needs API version {NEW_SINCE} or newer")


def _check_loop(where: str, raw: dict[str, Any], settings: RuleChecks) -> bool:
    """Whether the part loops; :raises InvalidInput: a bad loop."""
    if LOOP not in raw:
        return False
    _needs_new(f"{where}.loop", settings, "loop")
    loop = raw[LOOP]
    if isinstance(loop, list):
        # the items' variables are rendered on the node before the items run
        _check_templates(
            f"{where}.loop", loop, templates.condition_template, False, settings
        )
        return True
    if isinstance(loop, str):
        template = templates.condition_template(loop)
        if template is not None and template.lone is not None:
            if template.lone.root == "item":
                raise _invalid(f"{where}.loop", "a loop cannot be over {item}")
            return True
    raise _invalid(
        f"{where}.loop",
        "must be a list or one variable that is a list, e.g. '{inventory[interfaces]}'",
    )


def _check_templates(
    where: str, value: Any, parse: Any, looping: bool, settings: RuleChecks
) -> None:
    try:
        found = templates.references(value, parse)
    except ValueError as exc:
        raise _invalid(where, str(exc)) from None
    for ref in found:
        if ref.root == "item" and where.endswith(".loop"):
            raise _invalid(where, f"{{{ref.text}}}: a loop's items cannot name an item")
        if ref.root == "item" and not looping:
            raise _invalid(where, f"{{{ref.text}}} is only known inside a loop")
        if ref.root not in templates.TEXT_ROOTS:
            _needs_new(where, settings, f"the variable {{{ref.text}}}")


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


def _condition(index: int, raw: Any, settings: RuleChecks) -> dict[str, Any]:
    where = f"conditions[{index}]"
    if not isinstance(raw, dict):
        raise _invalid(where, "must be an object")
    op = raw.get("op")
    negated = isinstance(op, str) and op.startswith(NEGATION)
    if isinstance(op, str) and negated:
        _needs_new(f"{where}.op", settings, f"negation ({op!r})")
        if raw.get("invert") is True:
            raise _invalid(
                f"{where}.op", f"{op!r} with invert true: say one or neither"
            )
        op = op[len(NEGATION) :]
    plugin = conditions().get(op) if isinstance(op, str) else None
    if plugin is None:
        raise _invalid(
            f"{where}.op",
            f"unknown condition {op!r}; available: {', '.join(sorted(conditions()))}",
        )
    _check_path(f"{where}.field", raw.get("field"), settings)
    looping = _check_loop(where, raw, settings)
    multiple = raw.get("multiple", "any")
    if multiple not in MULTIPLE:
        raise _invalid(
            f"{where}.multiple", f"{multiple!r} is not one of {', '.join(MULTIPLE)}"
        )
    invert = raw.get("invert", False)
    if not isinstance(invert, bool):
        raise _invalid(f"{where}.invert", "must be true or false")
    params = {k: v for k, v in raw.items() if k not in CONDITION_KEYS}
    plugin_params = {k: v for k, v in params.items() if k != LOOP}
    _check_templates(
        f"{where}.field", raw["field"], templates.condition_template, looping, settings
    )
    _check_templates(
        where, plugin_params, templates.condition_template, looping, settings
    )
    if not _templated(plugin_params, templates.condition_template):
        _check_params(where, plugin, plugin_params)
    return {
        "op": op,
        "field": raw["field"],
        "multiple": multiple,
        "invert": invert or negated,
        **params,
    }


def _templated(params: dict[str, Any], parse: Any) -> bool:
    """Whether a parameter holds a variable: its type is known at run time."""
    return bool(templates.references(params, parse))


def _action(index: int, raw: Any, settings: RuleChecks) -> dict[str, Any]:
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
    looping = _check_loop(where, raw, settings)
    plugin_params = {k: v for k, v in params.items() if k != LOOP}
    _check_templates(where, plugin_params, templates.action_template, looping, settings)
    _check_params(where, plugin, plugin_params)
    if name == "api-call" and settings.allowed_hosts is not None:
        try:
            api_call.allowed(plugin_params["url"], settings.allowed_hosts)
        except ValueError as exc:
            raise _invalid(f"{where}.url", str(exc)) from None
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


def _priority(body: dict[str, Any], settings: RuleChecks) -> int:
    if "priority" not in body:
        return 0
    _needs_new("priority", settings, "priority")
    value = body["priority"]
    if not isinstance(value, int) or isinstance(value, bool):
        raise _invalid("priority", f"must be an integer from 0 to {PRIORITY_MAX}")
    if not settings.built_in and not 0 <= value <= PRIORITY_MAX:
        raise _invalid("priority", f"{value} is not from 0 to {PRIORITY_MAX}")
    return value


def _sensitive(body: dict[str, Any], settings: RuleChecks) -> bool:
    if "sensitive" not in body:
        return False
    _needs_new("sensitive", settings, "sensitive")
    if not isinstance(body["sensitive"], bool):
        raise _invalid("sensitive", "must be true or false")
    return bool(body["sensitive"])


def validate(
    body: dict[str, Any], settings: RuleChecks | None = None
) -> dict[str, Any]:
    """A rule from a request body, with defaults filled in.

    :raises InvalidInput: naming the first bad field.
    """
    settings = settings or RuleChecks()
    known = set(SCHEMA["properties"])
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
        "priority": _priority(body, settings),
        "sensitive": _sensitive(body, settings),
        "language": LANGUAGE if settings.new_language else 1,
        "conditions": [
            _condition(i, c, settings) for i, c in enumerate(raw_conditions)
        ],
        "actions": [_action(i, a, settings) for i, a in enumerate(raw_actions)],
    }
