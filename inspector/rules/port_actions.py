"""Rule actions on the node's ports: ``set-port-attribute``,
``extend-port-attribute``, ``del-port-attribute`` (Ironic's names).

``port_id`` names a port by its Ironic UUID or by its MAC address (a
loop over ``{inventory[interfaces]}`` has the MAC, ``{ports}`` the UUID);
a port this processing creates is named by its MAC and changed in the
body that creates it. ``path`` is a JSON pointer into the port
(``/extra/switch``, ``/physical_network``).
"""

from typing import Any

from inspector import exceptions
from inspector.hooks.base import Data, NodeContext
from inspector.rules.actions import Action

_STRING = {"type": "string", "minLength": 1}


def _parts(path: str) -> list[str]:
    parts = [p for p in path.strip().strip("/").split("/") if p]
    if not parts:
        raise ValueError("path must name a port field, e.g. /extra/switch")
    return parts


def _find(ctx: NodeContext, port_id: str) -> tuple[Data | None, Data | None]:
    """(existing port, body of a port to create) named by ``port_id``."""
    wanted = port_id.strip().lower()
    for port in ctx.ports.values():
        if str(port.get("uuid", "")).lower() == wanted:
            return port, None
    if wanted in ctx.ports:
        return ctx.ports[wanted], None
    for body in ctx.ports_to_create:
        if str(body.get("address", "")).lower() == wanted:
            return None, body
    known = sorted(ctx.ports) + [str(b.get("address")) for b in ctx.ports_to_create]
    raise exceptions.ProcessingError(
        f"port {port_id!r} is not a port of the node (its ports: "
        f"{', '.join(known) or 'none'})"
    )


def _current(port: Data, patches: list[Data], parts: list[str]) -> Any:
    pointer = "/" + "/".join(parts)
    for patch in reversed(patches):
        if patch["path"] == pointer:
            return None if patch["op"] == "remove" else patch.get("value")
    value: Any = port
    for part in parts:
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _set_in(body: Data, parts: list[str], value: Any) -> None:
    target = body
    for part in parts[:-1]:
        target = target.setdefault(part, {})
        if not isinstance(target, dict):
            raise exceptions.ProcessingError(
                f"port field /{'/'.join(parts)}: {part!r} is not an object"
            )
    target[parts[-1]] = value


class _PortAction(Action):
    def validate(self, params: dict[str, Any]) -> None:
        _parts(params["path"])


class SetPortAttribute(_PortAction):
    """Set the field at ``path`` of the port ``port_id`` to ``value``."""

    PARAMS = {
        "type": "object",
        "properties": {"port_id": _STRING, "path": _STRING, "value": {}},
        "required": ["port_id", "path", "value"],
    }

    def apply(self, ctx: NodeContext, params: dict[str, Any]) -> None:
        parts = _parts(params["path"])
        port, body = _find(ctx, str(params["port_id"]))
        if body is not None:
            _set_in(body, parts, params["value"])
        elif port is not None:
            ctx.patch_port(port["uuid"], "/" + "/".join(parts), params["value"])


class ExtendPortAttribute(_PortAction):
    """Append ``value`` to the list at ``path`` of the port ``port_id``
    (created when missing); with ``unique`` only when not there yet."""

    PARAMS = {
        "type": "object",
        "properties": {
            "port_id": _STRING,
            "path": _STRING,
            "value": {},
            "unique": {"type": "boolean"},
        },
        "required": ["port_id", "path", "value"],
    }

    def apply(self, ctx: NodeContext, params: dict[str, Any]) -> None:
        parts = _parts(params["path"])
        port, body = _find(ctx, str(params["port_id"]))
        if body is not None:
            current = _current(body, [], parts)
        else:
            assert port is not None
            current = _current(port, ctx.port_patches.get(port["uuid"], []), parts)
        current = [] if current is None else current
        if not isinstance(current, list):
            raise exceptions.ProcessingError(
                f"extend-port-attribute: port field /{'/'.join(parts)} is not a "
                f"list: {current!r}"
            )
        if params.get("unique") and params["value"] in current:
            return
        extended = [*current, params["value"]]
        if body is not None:
            _set_in(body, parts, extended)
        elif port is not None:
            ctx.patch_port(port["uuid"], "/" + "/".join(parts), extended)


class DelPortAttribute(_PortAction):
    """Remove the field at ``path`` of the port ``port_id``; absent is fine."""

    PARAMS = {
        "type": "object",
        "properties": {"port_id": _STRING, "path": _STRING},
        "required": ["port_id", "path"],
    }

    def apply(self, ctx: NodeContext, params: dict[str, Any]) -> None:
        parts = _parts(params["path"])
        port, body = _find(ctx, str(params["port_id"]))
        if body is not None:
            target: Any = body
            for part in parts[:-1]:
                target = target.get(part) if isinstance(target, dict) else None
            if isinstance(target, dict):
                target.pop(parts[-1], None)
            return
        assert port is not None
        patches = ctx.port_patches.get(port["uuid"], [])
        if _current(port, patches, parts) is not None:
            ctx.port_patches.setdefault(port["uuid"], []).append(
                {"op": "remove", "path": "/" + "/".join(parts)}
            )
