"""Running the rules on one node after the processing hooks.

Rules run in the order they were created. A rule applies when its scope is
empty or equals the node's ``properties.inspection_scope`` and every
condition holds; its actions then record their changes in the node context,
which is written to Ironic with the hooks' changes. A ``fail`` action, or
an action whose ``{data[...]}`` reference is missing from the data, ends the
introspection in error and nothing is written.
"""

import copy
import logging
import string
from typing import Any

from inspector import exceptions
from inspector.processing.base import Data, NodeContext
from inspector.rules import validation

LOG = logging.getLogger(__name__)


def _node_view(ctx: NodeContext) -> Data:
    """The node as it will be once the recorded patches are applied."""
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


def _values(field: str, data: Data, node: Data) -> list[Any]:
    source = node if field.startswith(validation.NODE_PREFIX) else data
    path = validation.parse_path(field)
    return [match.value for match in path.find(source)]


def _holds(condition: dict[str, Any], data: Data, node: Data) -> bool:
    plugin = validation.conditions()[condition["op"]]
    params = {k: v for k, v in condition.items() if k not in validation.CONDITION_KEYS}
    values = _values(condition["field"], data, node)
    if not values:
        if not plugin.ALLOW_NONE:
            return False  # a missing field never matches, inverted or not
        values = [None]
    if condition["multiple"] == "first":
        values = values[:1]
    check = all if condition["multiple"] == "all" else any
    result = check(plugin.check(value, params) for value in values)
    return not result if condition["invert"] else result


class _Formatter(string.Formatter):
    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        try:
            return super().get_field(field_name, args, kwargs)
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise exceptions.ProcessingError(
                f"{{{field_name}}} is not in the introspection data ({exc})"
            ) from None


def _formatted(value: Any, data: Data) -> Any:
    if isinstance(value, str):
        return _Formatter().vformat(value, (), {"data": data})
    if isinstance(value, list):
        return [_formatted(v, data) for v in value]
    if isinstance(value, dict):
        return {k: _formatted(v, data) for k, v in value.items()}
    return value


def _in_scope(rule: dict[str, Any], node: Data) -> bool:
    scope = rule.get("scope")
    if not scope:
        return True
    properties = node.get("properties") or {}
    return bool(properties.get("inspection_scope") == scope)


def matching(rule: dict[str, Any], data: Data, ctx: NodeContext) -> bool:
    node = _node_view(ctx)
    if not _in_scope(rule, node):
        return False
    return all(_holds(c, data, node) for c in rule["conditions"])


def apply_rules(rules: list[dict[str, Any]], data: Data, ctx: NodeContext) -> list[str]:
    """Run every rule on the node; returns the UUIDs of those that applied."""
    applied = []
    for rule in rules:
        if not matching(rule, data, ctx):
            continue
        LOG.info(
            "Rule %s (%s) applies to node %s",
            rule["uuid"],
            rule.get("description") or "no description",
            ctx.uuid,
        )
        for index, action in enumerate(rule["actions"]):
            params = {k: v for k, v in action.items() if k != "action"}
            where = f"rule {rule['uuid']} action {index} ({action['action']})"
            try:
                formatted = _formatted(params, data)
                validation.actions()[action["action"]].apply(ctx, formatted)
            except exceptions.ProcessingError as exc:
                if action["action"] == "fail":
                    raise
                raise exceptions.ProcessingError(f"{where}: {exc}") from exc
        applied.append(rule["uuid"])
    return applied
