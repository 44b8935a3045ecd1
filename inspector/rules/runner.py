"""Running the rules on one node after the processing hooks.

Rules run by ``priority``, higher first (as Ironic runs them), then in the
order they were created. A rule applies when its scope is empty or equals
the node's ``properties.inspection_scope`` and every condition holds; its
actions then record their changes in the node context, which is written
to Ironic with the hooks' changes. A ``fail`` action, or any rule that
cannot run on this node (a variable that does not resolve, a loop over
something that is not a list, an api-call that fails), ends the
introspection in error naming the rule and the cause, and nothing is
written.

The rules are compiled once (:func:`compile_rules`, kept by the conductor
until the rule set changes); :func:`apply_rules` compiles and runs in one
call, for callers holding rule dicts.
"""

import copy
import dataclasses
import logging
from collections.abc import Iterable
from typing import Any

from inspector import exceptions
from inspector.hooks.base import Data, NodeContext
from inspector.rules import templates
from inspector.rules.actions import Fail, RuleRun
from inspector.rules.compiled import (
    CompiledAction,
    CompiledCondition,
    CompiledRule,
    RuleError,
    compile_rule,
    loop_items,
)
from inspector.rules.masking import HIDDEN, hidden

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class RunSettings:
    """What the service's options say about running rules."""

    allowed_hosts: tuple[str, ...] = ()
    max_timeout: float = 30.0

    @classmethod
    def from_conf(cls, conf: Any) -> "RunSettings":
        """From the ``[rules]`` options of a ``ConfigOpts``."""
        return cls(
            allowed_hosts=tuple(conf.rules.api_call_allowed_hosts),
            max_timeout=conf.rules.api_call_max_timeout,
        )


class _View:
    """The node as it will be once the recorded patches are applied, made
    again only when a rule recorded more."""

    def __init__(self, ctx: NodeContext) -> None:
        self.ctx = ctx
        self.seen = -1
        self.node: Data = ctx.node

    def current(self) -> Data:
        count = len(self.ctx.node_patches)
        if count != self.seen:
            self.node = _node_view(self.ctx) if count else self.ctx.node
            self.seen = count
        return self.node


def _node_view(ctx: NodeContext) -> Data:
    node = copy.deepcopy(ctx.node)
    for patch in ctx.node_patches:
        parts = patch["path"].strip("/").split("/")
        target: Any = node
        for part in parts[:-1]:
            target = target.setdefault(part, {}) if isinstance(target, dict) else {}
        if not isinstance(target, dict):
            continue
        if patch["op"] == "remove":
            target.pop(parts[-1], None)
        else:
            target[parts[-1]] = patch.get("value")
    return node


def _namespace(data: Data, node: Data, ctx: NodeContext) -> templates.Namespace:
    inventory = data.get("inventory") if isinstance(data, dict) else None
    return {
        "data": data,
        "plugin_data": data,
        "inventory": inventory if inventory is not None else {},
        "node": node,
        "ports": list(ctx.ports.values()),
    }


def _field_values(
    cond: CompiledCondition, data: Data, node: Data, ns: templates.Namespace
) -> list[Any]:
    if cond.variable is not None:
        try:
            return [cond.variable.render(ns)]
        except templates.Unresolved:
            if cond.plugin.ALLOW_NONE:
                return []
            raise
    assert cond.find is not None
    return cond.find(node if cond.on_node else data)


def _judge(
    cond: CompiledCondition,
    data: Data,
    node: Data,
    ns: templates.Namespace,
    multiple: str,
    seen: list[Any] | None,
) -> bool:
    """The condition on one namespace (one loop item), ``invert`` applied."""
    values = _field_values(cond, data, node, ns)
    params = cond.params if cond.render is None else cond.render(ns)
    if seen is not None:
        seen.extend(values)
    if not values:
        if not cond.plugin.ALLOW_NONE:
            return False  # a missing field never matches, inverted or not
        values = [None]
    if multiple == "first":
        values = values[:1]
    check = all if multiple == "all" else any
    result = check(cond.plugin.check(value, params) for value in values)
    return not result if cond.invert else result


def _quick(
    cond: CompiledCondition, data: Data, node: Data, found: dict[str, list[Any]]
) -> bool:
    """:func:`_judge` for a condition without variables or a loop: the
    path most rules take, kept short (the cost of 200 rules per node).
    ``found`` keeps what each field found until a rule applies (rules
    often read the same fields)."""
    values = found.get(cond.field)
    if values is None:
        assert cond.find is not None
        values = found[cond.field] = cond.find(node if cond.on_node else data)
    plugin, params = cond.plugin, cond.params
    if not values:
        if not plugin.ALLOW_NONE:
            return False
        values = [None]
    if cond.multiple == "all":
        result = all(plugin.check(value, params) for value in values)
    else:
        result = False
        for value in values[:1] if cond.multiple == "first" else values:
            if plugin.check(value, params):
                result = True
                break
    return result != cond.invert


def _holds(
    cond: CompiledCondition,
    data: Data,
    node: Data,
    ns: templates.Namespace,
    seen: list[Any] | None,
) -> bool:
    if cond.loop is None:
        return _judge(cond, data, node, ns, cond.multiple, seen)
    items = loop_items(cond.loop, ns)
    if cond.multiple == "first":
        items = items[:1]
    results = (_judge(cond, data, node, {**ns, "item": i}, "any", seen) for i in items)
    return all(results) if cond.multiple == "all" else any(results)


def _in_scope(rule: CompiledRule, node: Data) -> bool:
    if not rule.scope:
        return True
    properties = node.get("properties") or {}
    return bool(properties.get("inspection_scope") == rule.scope)


def _where(rule: CompiledRule, part: str, exc: BaseException) -> str:
    cause = exc.message if isinstance(exc, exceptions.InspectorError) else str(exc)
    if rule.sensitive:
        cause = "the cause is not shown: the rule is sensitive"
    return f"rule {rule.uuid} {part}: {cause}"


class Trace:
    """What a trial records of each rule (:mod:`inspector.rules.trial`)."""

    def __init__(self) -> None:
        self.rules: list[dict[str, Any]] = []

    def rule(self, rule: CompiledRule) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "uuid": rule.uuid,
            "description": rule.description,
            "priority": rule.priority,
            "sensitive": rule.sensitive,
            "in_scope": None,
            "matched": False,
            "conditions": [],
            "actions": [],
            "error": None,
        }
        self.rules.append(entry)
        return entry


class RuleSet:
    """Rules compiled once, in the order they run."""

    def __init__(self, rules: Iterable[CompiledRule]) -> None:
        # sorted() is stable: the creation order stays within a priority
        self.rules = tuple(sorted(rules, key=lambda r: -r.priority))

    def __len__(self) -> int:
        return len(self.rules)

    def apply(
        self,
        data: Data,
        ctx: NodeContext,
        settings: RunSettings | None = None,
        trace: Trace | None = None,
    ) -> list[str]:
        """Run every rule on the node; the UUIDs of those that applied.

        With ``trace`` (a trial) nothing leaves the process and a rule
        that cannot run is recorded there instead of raised.
        """
        settings = settings or RunSettings()
        view = _View(ctx)
        applied = []
        found: dict[str, list[Any]] = {}
        for rule in self.rules:
            entry = trace.rule(rule) if trace is not None else None
            try:
                if self._run(rule, data, ctx, view, settings, entry, found):
                    applied.append(rule.uuid)
                    found.clear()  # its actions may have changed the node or data
            except exceptions.ProcessingError as exc:
                if entry is None:
                    raise
                entry["error"] = exc.message
                break  # the processing would end here, writing nothing
        return applied

    def _run(
        self,
        rule: CompiledRule,
        data: Data,
        ctx: NodeContext,
        view: _View,
        settings: RunSettings,
        entry: dict[str, Any] | None,
        found: dict[str, list[Any]],
    ) -> bool:
        if rule.broken is not None:
            raise exceptions.ProcessingError(f"rule {rule.uuid}: {rule.broken}")
        node = view.current()
        in_scope = _in_scope(rule, node)
        if entry is not None:
            entry["in_scope"] = in_scope
        if not in_scope:
            return False
        if entry is None and not rule.variables:
            for cond in rule.conditions:
                try:
                    if not _quick(cond, data, node, found):
                        return False
                except (ValueError, TypeError) as exc:
                    raise exceptions.ProcessingError(
                        _where(rule, cond.name, exc)
                    ) from None
            return self._matched(rule, data, ctx, view, settings, entry)
        ns = _namespace(data, node, ctx) if rule.variables else {}
        for cond in rule.conditions:
            seen: list[Any] | None = [] if entry is not None else None
            try:
                holds = _holds(cond, data, node, ns, seen)
            except (RuleError, templates.Unresolved, ValueError, TypeError) as exc:
                raise exceptions.ProcessingError(_where(rule, cond.name, exc)) from None
            if entry is not None:
                entry["conditions"].append(
                    {
                        "index": cond.index,
                        "op": cond.op,
                        "invert": cond.invert,
                        "field": HIDDEN if rule.sensitive else cond.field,
                        "values": [HIDDEN] if rule.sensitive and seen else seen,
                        "matched": holds,
                    }
                )
            if not holds:
                return False
        return self._matched(rule, data, ctx, view, settings, entry)

    def _matched(
        self,
        rule: CompiledRule,
        data: Data,
        ctx: NodeContext,
        view: _View,
        settings: RunSettings,
        entry: dict[str, Any] | None,
    ) -> bool:
        if entry is not None:
            entry["matched"] = True
        LOG.info(
            "Rule %s (%s) applies to node %s",
            rule.uuid,
            rule.description or "no description",
            ctx.uuid,
        )
        run = RuleRun(
            data=data,
            rule=rule.uuid,
            sensitive=rule.sensitive,
            allowed_hosts=settings.allowed_hosts,
            max_timeout=settings.max_timeout,
            trial=entry is not None,
        )
        before = len(ctx.node_patches)
        ports_before = {uuid: len(p) for uuid, p in ctx.port_patches.items()}
        created_before = (
            copy.deepcopy(ctx.ports_to_create)
            if entry is not None and rule.sensitive
            else None
        )
        for action in rule.actions:
            self._act(rule, action, run, ctx, view, entry)
        if entry is not None:
            # which changes are this rule's: a trial masks a sensitive one's
            entry["node_patches"] = (before, len(ctx.node_patches))
            entry["port_patches"] = {
                uuid: (ports_before.get(uuid, 0), len(p))
                for uuid, p in ctx.port_patches.items()
            }
            if created_before is not None:
                # the bodies of ports to create as they were before it
                entry["ports_to_create"] = created_before
        return True

    def _act(
        self,
        rule: CompiledRule,
        action: CompiledAction,
        run: RuleRun,
        ctx: NodeContext,
        view: _View,
        entry: dict[str, Any] | None,
    ) -> None:
        try:
            ns = _namespace(run.data, view.current(), ctx)
            if action.loop is None:
                rounds = [ns]
            else:
                rounds = [{**ns, "item": i} for i in loop_items(action.loop, ns)]
            for round_ns in rounds:
                params = (
                    action.params if action.render is None else action.render(round_ns)
                )
                before = len(run.notes)
                if entry is not None:
                    entry["actions"].append(
                        {
                            "index": action.index,
                            "action": action.action,
                            "params": hidden(params) if rule.sensitive else params,
                        }
                    )
                action.plugin.apply_in(run, ctx, params)
                if entry is not None and len(run.notes) > before:
                    notes = run.notes[before:]
                    entry["actions"][-1]["would"] = (
                        [hidden(n) for n in notes] if rule.sensitive else notes
                    )
        except exceptions.ProcessingError as exc:
            if isinstance(action.plugin, Fail):
                raise
            raise exceptions.ProcessingError(_where(rule, action.name, exc)) from exc
        except (
            RuleError,
            templates.Unresolved,
            ValueError,
            TypeError,
            KeyError,
        ) as exc:
            raise exceptions.ProcessingError(_where(rule, action.name, exc)) from None


def compile_rules(rules: Iterable[dict[str, Any]]) -> RuleSet:
    """The rule set of rule dicts (as the database gives them, oldest first)."""
    return RuleSet(compile_rule(rule) for rule in rules)


def apply_rules(rules: list[dict[str, Any]], data: Data, ctx: NodeContext) -> list[str]:
    """Run every rule on the node; returns the UUIDs of those that applied."""
    return compile_rules(rules).apply(data, ctx)
