"""Ironic writes that could not be made yet: kept, shown, made later.

When Ironic is down, or keeps a node locked, or fails after the client's
retries, the processed data is kept and the introspection finishes with
the writes it still owes recorded (``pending_ironic_sync`` in its status
from API 1.20). The reconcile (a periodic task of the leader, and
``ironic-inspector-manage sync``) makes them. Every write is idempotent,
so a partly made set is simply made again.
"""

from typing import Any

from inspector import exceptions
from inspector.hooks.apply import apply_to_ironic
from inspector.hooks.base import Data, NodeContext

TEMPORARY = (exceptions.BaremetalError, exceptions.NodeLocked)
"""Failures worth retrying later; Ironic refusing a write (400) is not."""


class WritesOwed(exceptions.InspectorError):
    """Processing finished but Ironic did not take its results."""

    code = 503

    def __init__(self, writes: dict[str, Any], reason: str, data: Data) -> None:
        super().__init__(f"Writes to Ironic are pending: {reason}")
        self.writes = writes
        self.reason = reason
        self.data = data


def from_context(ctx: NodeContext, power_off: bool = False) -> dict[str, Any]:
    return {
        "node_patches": ctx.node_patches,
        "ports_to_create": ctx.ports_to_create,
        "ports_to_delete": ctx.ports_to_delete,
        "port_patches": ctx.port_patches,
        "traits_to_add": ctx.traits_to_add,
        "traits_to_remove": ctx.traits_to_remove,
        "power_off": power_off,
    }


def describe(writes: dict[str, Any]) -> str:
    """'3 property changes, 1 port to create, power off' for tables and logs."""
    parts = [
        "processing again (Ironic was away before any write)"
        if writes.get("reprocess")
        else ""
    ]
    parts = [p for p in parts if p]
    for key, label in (
        ("node_patches", "property changes"),
        ("ports_to_create", "ports to create"),
        ("ports_to_delete", "ports to delete"),
        ("port_patches", "ports to update"),
        ("traits_to_add", "traits to add"),
        ("traits_to_remove", "traits to remove"),
    ):
        if writes.get(key):
            parts.append(f"{len(writes[key])} {label}")
    if writes.get("power_off"):
        parts.append("power off")
    return ", ".join(parts) or "nothing"


def make(client: Any, uuid: str, writes: dict[str, Any]) -> None:
    """Make ``writes`` for node ``uuid`` (raises what the client raises)."""
    ctx = NodeContext(uuid=uuid, node={}, ports={})
    ctx.node_patches = list(writes.get("node_patches") or [])
    ctx.ports_to_create = list(writes.get("ports_to_create") or [])
    ctx.ports_to_delete = list(writes.get("ports_to_delete") or [])
    ctx.port_patches = dict(writes.get("port_patches") or {})
    ctx.traits_to_add = list(writes.get("traits_to_add") or [])
    ctx.traits_to_remove = list(writes.get("traits_to_remove") or [])
    apply_to_ironic(client, ctx)
    if writes.get("power_off"):
        client.set_power_state(uuid, "power off")
