"""Writes what the hooks recorded in a NodeContext into Ironic."""

import logging
from typing import Any, Protocol

from inspector import exceptions
from inspector.hooks.base import NodeContext

LOG = logging.getLogger(__name__)


class IronicWriter(Protocol):
    def patch_node(
        self, node_uuid: str, patches: list[dict[str, Any]]
    ) -> dict[str, Any]: ...

    def create_port(self, node_uuid: str, body: dict[str, Any]) -> dict[str, Any]: ...

    def delete_port(self, port_uuid: str) -> None: ...

    def patch_port(
        self, port_uuid: str, patches: list[dict[str, Any]]
    ) -> dict[str, Any]: ...

    def add_trait(self, node_uuid: str, trait: str) -> None: ...

    def remove_trait(self, node_uuid: str, trait: str) -> None: ...


def apply_to_ironic(client: IronicWriter, ctx: NodeContext) -> None:
    """One node PATCH, then port deletions, creations and updates."""
    if ctx.node_patches:
        client.patch_node(ctx.uuid, ctx.node_patches)
    for port_uuid in ctx.ports_to_delete:
        client.delete_port(port_uuid)
        LOG.info("Deleted port %s of node %s", port_uuid, ctx.uuid)
    for body in ctx.ports_to_create:
        try:
            client.create_port(ctx.uuid, body)
        except exceptions.Conflict as exc:
            LOG.warning(
                "Port %s was not created for node %s: a port with that MAC "
                "exists already (%s)",
                body.get("address"),
                ctx.uuid,
                exc,
            )
            continue
        LOG.info(
            "Created port %s (pxe_enabled=%s) for node %s",
            body.get("address"),
            body.get("pxe_enabled"),
            ctx.uuid,
        )
    for port_uuid, patches in ctx.port_patches.items():
        try:
            client.patch_port(port_uuid, patches)
        except exceptions.NotFound:
            # the ports come from the listing made when the introspection
            # started: one deleted since has nothing left to update
            LOG.warning(
                "Port %s of node %s was deleted from Ironic during the "
                "introspection; not updating it",
                port_uuid,
                ctx.uuid,
            )
    for trait in ctx.traits_to_add:
        client.add_trait(ctx.uuid, trait)
    for trait in ctx.traits_to_remove:
        client.remove_trait(ctx.uuid, trait)
