"""Rule actions (entry points ``ironic_inspector.rules.actions``).

Actions never call Ironic: like processing hooks they record node patches
and trait changes in the :class:`NodeContext`, which the pipeline writes
with the hooks' own changes. String parameters arrive already formatted
with the introspection data (``{data[inventory][cpu][count]}``).
"""

import abc
import dataclasses
import logging
from typing import Any

from inspector import exceptions
from inspector.hooks import capabilities
from inspector.hooks.base import Data, NodeContext

LOG = logging.getLogger(__name__)

_STRING = {"type": "string", "minLength": 1}


def _path(path: str) -> str:
    """'extra/foo' or '/extra/foo' -> '/extra/foo'."""
    return "/" + path.strip().lstrip("/")


@dataclasses.dataclass
class RuleRun:
    """What an action knows of the run beyond the node context: the data
    (which plugin-data actions change), the rule, the settings, and whether
    it is a trial (``POST /v1/rules/test``), where nothing leaves the
    process and the actions with effects outside it say what they would do.
    """

    data: Data
    rule: str = ""
    sensitive: bool = False
    allowed_hosts: tuple[str, ...] = ()
    """``[rules]api_call_allowed_hosts``."""
    max_timeout: float = 30.0
    """``[rules]api_call_max_timeout``."""
    trial: bool = False
    notes: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """What the actions with outside effects did or, in a trial, would do."""


class Action(abc.ABC):
    """One change; ``PARAMS`` is the JSON schema of its parameters."""

    PARAMS: dict[str, Any] = {"type": "object", "properties": {}}

    def validate(self, params: dict[str, Any]) -> None:
        """Check parameters beyond the schema; raise ValueError naming them."""

    @abc.abstractmethod
    def apply(self, ctx: NodeContext, params: dict[str, Any]) -> None:
        """Record the change in ``ctx``."""

    def apply_in(self, run: RuleRun, ctx: NodeContext, params: dict[str, Any]) -> None:
        """Record the change, knowing the run; actions that change the data
        or reach outside the process override this one."""
        self.apply(ctx, params)


class RunAction(Action):
    """An action that needs the run (:meth:`apply_in`)."""

    def apply(self, ctx: NodeContext, params: dict[str, Any]) -> None:
        self.apply_in(RuleRun(data={}), ctx, params)

    @abc.abstractmethod
    def apply_in(self, run: RuleRun, ctx: NodeContext, params: dict[str, Any]) -> None:
        """Record the change, knowing the run."""


class Fail(Action):
    """End the introspection in error with ``message``."""

    PARAMS = {
        "type": "object",
        "properties": {"message": _STRING},
        "required": ["message"],
    }

    def apply(self, ctx: NodeContext, params: dict[str, Any]) -> None:
        raise exceptions.ProcessingError(str(params["message"]))


class _PathAction(Action):
    def validate(self, params: dict[str, Any]) -> None:
        path = _path(params["path"])
        if path == "/":
            raise ValueError("path must name a node field, e.g. /extra/owner")


class SetAttribute(_PathAction):
    """Set the node field at ``path`` (JSON pointer, e.g. /extra/rack) to ``value``."""

    PARAMS = {
        "type": "object",
        "properties": {"path": _STRING, "value": {}},
        "required": ["path", "value"],
    }

    def apply(self, ctx: NodeContext, params: dict[str, Any]) -> None:
        ctx.patch(_path(params["path"]), params["value"])


class ExtendAttribute(_PathAction):
    """Append ``value`` to the list at ``path`` (created when missing);
    with ``unique`` only when it is not there yet."""

    PARAMS = {
        "type": "object",
        "properties": {"path": _STRING, "value": {}, "unique": {"type": "boolean"}},
        "required": ["path", "value"],
    }

    def apply(self, ctx: NodeContext, params: dict[str, Any]) -> None:
        path = _path(params["path"])
        current = ctx.current(path)
        if current is None:
            current = []
        if not isinstance(current, list):
            raise exceptions.ProcessingError(
                f"extend-attribute: node field {path} is not a list: {current!r}"
            )
        if params.get("unique") and params["value"] in current:
            return
        ctx.patch(path, [*current, params["value"]])


class SetCapability(Action):
    """Set capability ``name`` to ``value`` in properties.capabilities."""

    PARAMS = {
        "type": "object",
        "properties": {"name": _STRING, "value": {}},
        "required": ["name", "value"],
    }

    def validate(self, params: dict[str, Any]) -> None:
        for key in ("name", "value"):
            if any(c in str(params[key]) for c in ",:"):
                raise ValueError(f"{key} may not contain ',' or ':'")

    def apply(self, ctx: NodeContext, params: dict[str, Any]) -> None:
        capabilities.update(ctx, {str(params["name"]): str(params["value"])})


class AddTrait(Action):
    """Add the trait ``name`` to the node (e.g. CUSTOM_GPU)."""

    PARAMS = {"type": "object", "properties": {"name": _STRING}, "required": ["name"]}

    def apply(self, ctx: NodeContext, params: dict[str, Any]) -> None:
        name = str(params["name"])
        if name in ctx.traits_to_remove:
            ctx.traits_to_remove.remove(name)
        if name not in ctx.traits_to_add:
            ctx.traits_to_add.append(name)


class RemoveTrait(Action):
    """Remove the trait ``name`` from the node; absent is fine."""

    PARAMS = {"type": "object", "properties": {"name": _STRING}, "required": ["name"]}

    def apply(self, ctx: NodeContext, params: dict[str, Any]) -> None:
        name = str(params["name"])
        if name in ctx.traits_to_add:
            ctx.traits_to_add.remove(name)
        if name not in ctx.traits_to_remove:
            ctx.traits_to_remove.append(name)


class DelAttribute(_PathAction):
    """Remove the node field at ``path``; absent is fine."""

    PARAMS = {"type": "object", "properties": {"path": _STRING}, "required": ["path"]}

    def apply(self, ctx: NodeContext, params: dict[str, Any]) -> None:
        path = _path(params["path"])
        if ctx.current(path) is not None:
            ctx.remove(path)


class UnsetCapability(Action):
    """Remove capability ``name`` from properties.capabilities."""

    PARAMS = {"type": "object", "properties": {"name": _STRING}, "required": ["name"]}

    def apply(self, ctx: NodeContext, params: dict[str, Any]) -> None:
        current = ctx.current("/properties/capabilities")
        if not isinstance(current, str) or not current:
            return
        name = str(params["name"])
        kept = [
            part
            for part in current.split(",")
            if part and part.split(":", 1)[0].strip() != name
        ]
        if len(kept) != len([p for p in current.split(",") if p]):
            ctx.patch("/properties/capabilities", ",".join(kept))


LEVELS = ("debug", "info", "warning", "error", "critical")


class Log(RunAction):
    """Write ``msg`` to the conductor's log at ``level`` (default info)."""

    PARAMS = {
        "type": "object",
        "properties": {"msg": {"type": "string"}, "level": {"enum": list(LEVELS)}},
        "required": ["msg"],
    }

    def apply_in(self, run: RuleRun, ctx: NodeContext, params: dict[str, Any]) -> None:
        level = params.get("level", "info")
        message = "(a sensitive rule's message)" if run.sensitive else params["msg"]
        run.notes.append({"log": level, "msg": params["msg"]})
        if not run.trial:
            LOG.log(
                logging.getLevelNamesMapping()[level.upper()],
                "Rule %s on node %s: %s",
                run.rule,
                ctx.uuid,
                message,
            )


def _dotted(path: str) -> list[str]:
    parts = [p for p in path.strip().strip("/").replace("/", ".").split(".") if p]
    if not parts:
        raise ValueError("path must name a key of the data, e.g. extra.rack")
    return parts


class _PluginDataAction(RunAction):
    def validate(self, params: dict[str, Any]) -> None:
        _dotted(params["path"])

    @staticmethod
    def _parent(data: Data, parts: list[str], create: bool) -> Any:
        target: Any = data
        for part in parts[:-1]:
            if not isinstance(target, dict):
                raise exceptions.ProcessingError(
                    f"{'.'.join(parts)}: {part!r} is inside a "
                    f"{type(target).__name__}, not an object"
                )
            if part not in target:
                if not create:
                    return None
                target[part] = {}
            target = target[part]
        if not isinstance(target, dict):
            raise exceptions.ProcessingError(
                f"{'.'.join(parts)}: the parent is a {type(target).__name__}, "
                "not an object"
            )
        return target


class SetPluginData(_PluginDataAction):
    """Set the data's key at ``path`` (dotted: ``extra.rack``) to ``value``;
    the processed data is stored with it."""

    PARAMS = {
        "type": "object",
        "properties": {"path": _STRING, "value": {}},
        "required": ["path", "value"],
    }

    def apply_in(self, run: RuleRun, ctx: NodeContext, params: dict[str, Any]) -> None:
        parts = _dotted(params["path"])
        self._parent(run.data, parts, create=True)[parts[-1]] = params["value"]


class ExtendPluginData(_PluginDataAction):
    """Append ``value`` to the list at ``path`` in the data (created when
    missing); with ``unique`` only when it is not there yet."""

    PARAMS = {
        "type": "object",
        "properties": {"path": _STRING, "value": {}, "unique": {"type": "boolean"}},
        "required": ["path", "value"],
    }

    def apply_in(self, run: RuleRun, ctx: NodeContext, params: dict[str, Any]) -> None:
        parts = _dotted(params["path"])
        parent = self._parent(run.data, parts, create=True)
        current = parent.setdefault(parts[-1], [])
        if not isinstance(current, list):
            raise exceptions.ProcessingError(
                f"extend-plugin-data: {'.'.join(parts)} is not a list: {current!r}"
            )
        if not (params.get("unique") and params["value"] in current):
            current.append(params["value"])


class UnsetPluginData(_PluginDataAction):
    """Remove the data's key at ``path``; absent is fine."""

    PARAMS = {"type": "object", "properties": {"path": _STRING}, "required": ["path"]}

    def apply_in(self, run: RuleRun, ctx: NodeContext, params: dict[str, Any]) -> None:
        parts = _dotted(params["path"])
        parent = self._parent(run.data, parts, create=False)
        if parent is not None:
            parent.pop(parts[-1], None)
