"""Rule actions (entry points ``ironic_inspector.rules.actions``).

Actions never call Ironic: like processing hooks they record node patches
and trait changes in the :class:`NodeContext`, which the pipeline writes
with the hooks' own changes. String parameters arrive already formatted
with the introspection data (``{data[inventory][cpu][count]}``).
"""

import abc
from typing import Any

from inspector import exceptions
from inspector.processing import capabilities
from inspector.processing.base import NodeContext

_STRING = {"type": "string", "minLength": 1}


def _path(path: str) -> str:
    """'extra/foo' or '/extra/foo' -> '/extra/foo'."""
    return "/" + path.strip().lstrip("/")


class Action(abc.ABC):
    """One change; ``PARAMS`` is the JSON schema of its parameters."""

    PARAMS: dict[str, Any] = {"type": "object", "properties": {}}

    def validate(self, params: dict[str, Any]) -> None:
        """Check parameters beyond the schema; raise ValueError naming them."""

    @abc.abstractmethod
    def apply(self, ctx: NodeContext, params: dict[str, Any]) -> None:
        """Record the change in ``ctx``."""


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
