"""A rule compiled once: its paths, variables, loops and plugins resolved,
so that running it on a node does no parsing.

:func:`compile_rule` takes a rule as :mod:`inspector.rules.validation`
returns it (or as the database gives it back). A stored rule that no
longer compiles (a plugin removed, a rule stored by an older release that
validation now refuses) compiles into a rule that fails with the reason
when it runs, naming itself: the other rules are not lost.
"""

import dataclasses
from typing import Any

from inspector.rules import paths, templates, validation
from inspector.rules.actions import Action
from inspector.rules.conditions import Condition


@dataclasses.dataclass(frozen=True)
class TemplatedItems:
    """A loop written as a list whose items hold variables
    (``[{"k": "nic0", "v": "{inventory[interfaces][0][name]}"}]``): the
    items are rendered on the node first, then run, as Ironic runs them."""

    render: templates.Render


Loop = list[Any] | TemplatedItems | templates.Template | None


class RuleError(Exception):
    """A rule that cannot run on this node; the runner names the rule."""


def _loop(raw: Any) -> Loop:
    if raw is None:
        return None
    if isinstance(raw, list):
        render = templates.compile_value(raw, templates.condition_template)
        return raw if render is None else TemplatedItems(render)
    template = templates.condition_template(str(raw))
    if template is None or template.lone is None:
        raise ValueError(f"loop {raw!r} is not a list nor one variable")
    return template


def loop_items(loop: Loop, namespace: templates.Namespace) -> list[Any]:
    if isinstance(loop, list):
        return loop
    assert loop is not None
    try:
        items = loop.render(namespace)
    except templates.Unresolved as exc:
        raise RuleError(f"loop: {exc}") from None
    if isinstance(loop, TemplatedItems):
        return list(items)
    if not isinstance(items, list):
        raise RuleError(
            f"loop: {{{loop.lone.text if loop.lone else ''}}} is a "
            f"{type(items).__name__}, not a list"
        )
    return items


@dataclasses.dataclass(frozen=True)
class CompiledCondition:
    index: int
    op: str
    plugin: Condition
    field: str
    on_node: bool
    """The field is read from the node (``node://``), not the data."""
    find: paths.Finder | None
    """The JSONPath's finder; None when the field is a variable."""
    variable: templates.Template | None
    multiple: str
    invert: bool
    params: dict[str, Any]
    render: templates.Render | None
    """Renders the params when they hold variables."""
    loop: Loop

    @property
    def name(self) -> str:
        return f"condition {self.index} ({'!' if self.invert else ''}{self.op})"


@dataclasses.dataclass(frozen=True)
class CompiledAction:
    index: int
    action: str
    plugin: Action
    params: dict[str, Any]
    render: templates.Render | None
    loop: Loop

    @property
    def name(self) -> str:
        return f"action {self.index} ({self.action})"


@dataclasses.dataclass(frozen=True)
class CompiledRule:
    uuid: str
    description: str | None
    scope: str | None
    priority: int
    sensitive: bool
    conditions: tuple[CompiledCondition, ...]
    actions: tuple[CompiledAction, ...]
    broken: str | None = None
    """Why the stored rule does not compile: it fails when it runs."""

    variables: bool = False
    """Whether a condition reads a variable or loops (else the namespace
    is not built for the conditions)."""


def _condition(index: int, raw: dict[str, Any], language: int) -> CompiledCondition:
    plugin = validation.conditions()[raw["op"]]
    params = {
        k: v
        for k, v in raw.items()
        if k not in validation.CONDITION_KEYS and k != validation.LOOP
    }
    field = raw["field"]
    variable = validation.field_template(field)
    find = None
    if variable is None:
        find = paths.finder(validation.parse_path(field))
    prepared = plugin.prepare(params)
    return CompiledCondition(
        index=index,
        op=raw["op"],
        plugin=plugin,
        field=field,
        on_node=field.startswith(validation.NODE_PREFIX),
        find=find,
        variable=variable,
        multiple=raw.get("multiple", "any"),
        invert=bool(raw.get("invert")),
        params=prepared,
        # v1 never formatted a condition's values: a rule of v1 keeps them
        render=templates.compile_value(params, templates.condition_template)
        if language >= validation.LANGUAGE
        else None,
        loop=_loop(raw.get(validation.LOOP)),
    )


def _action(index: int, raw: dict[str, Any]) -> CompiledAction:
    plugin = validation.actions()[raw["action"]]
    params = {k: v for k, v in raw.items() if k not in ("action", validation.LOOP)}
    return CompiledAction(
        index=index,
        action=raw["action"],
        plugin=plugin,
        params=params,
        render=templates.compile_value(params, templates.action_template),
        loop=_loop(raw.get(validation.LOOP)),
    )


def compile_rule(rule: dict[str, Any]) -> CompiledRule:
    common = {
        "uuid": rule["uuid"],
        "description": rule.get("description"),
        "scope": rule.get("scope"),
        "priority": int(rule.get("priority") or 0),
        "sensitive": bool(rule.get("sensitive")),
    }
    try:
        conditions = tuple(
            _condition(i, c, int(rule.get("language") or validation.LANGUAGE))
            for i, c in enumerate(rule.get("conditions") or [])
        )
        return CompiledRule(
            conditions=conditions,
            actions=tuple(_action(i, a) for i, a in enumerate(rule["actions"])),
            variables=any(
                c.variable is not None or c.render is not None or c.loop is not None
                for c in conditions
            ),
            **common,
        )
    except (KeyError, ValueError, TypeError) as exc:
        return CompiledRule(
            conditions=(),
            actions=(),
            broken=f"the stored rule does not compile: {exc!r}",
            **common,
        )
