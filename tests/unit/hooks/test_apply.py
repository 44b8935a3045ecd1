from typing import Any

from inspector import exceptions
from inspector.hooks.apply import apply_to_ironic
from inspector.hooks.base import NodeContext


class Recorder:
    def __init__(self, conflict: str | None = None, gone: str | None = None) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.conflict = conflict
        self.gone = gone

    def patch_node(
        self, node_uuid: str, patches: list[dict[str, Any]]
    ) -> dict[str, Any]:
        self.calls.append(("patch_node", len(patches)))
        return {}

    def create_port(self, node_uuid: str, body: dict[str, Any]) -> dict[str, Any]:
        if body["address"] == self.conflict:
            raise exceptions.Conflict("MAC exists")
        self.calls.append(("create_port", body["address"]))
        return {}

    def delete_port(self, port_uuid: str) -> None:
        self.calls.append(("delete_port", port_uuid))

    def patch_port(
        self, port_uuid: str, patches: list[dict[str, Any]]
    ) -> dict[str, Any]:
        if port_uuid == self.gone:
            raise exceptions.NotFound(f"Port {port_uuid} could not be found")
        self.calls.append(("patch_port", port_uuid))
        return {}

    def add_trait(self, node_uuid: str, trait: str) -> None:
        self.calls.append(("add_trait", trait))

    def remove_trait(self, node_uuid: str, trait: str) -> None:
        self.calls.append(("remove_trait", trait))


def test_order_and_single_patch() -> None:
    ctx = NodeContext(uuid="n", node={}, ports={})
    ctx.patch("/properties/cpus", 1)
    ctx.patch("/properties/memory_mb", 2)
    ctx.ports_to_delete.append("old")
    ctx.ports_to_create += [{"address": "a"}, {"address": "b"}]
    ctx.patch_port("p", "/pxe_enabled", False)
    client = Recorder(conflict="a")
    apply_to_ironic(client, ctx)
    assert client.calls == [
        ("patch_node", 2),
        ("delete_port", "old"),
        ("create_port", "b"),
        ("patch_port", "p"),
    ]


def test_nothing_to_do_makes_no_calls() -> None:
    client = Recorder()
    apply_to_ironic(client, NodeContext(uuid="n", node={}, ports={}))
    assert client.calls == []


def test_a_port_deleted_since_the_start_is_skipped() -> None:
    """The ports were listed when the introspection started: one deleted
    in Ironic since is not updated, and the rest still is."""
    ctx = NodeContext(uuid="n", node={}, ports={})
    ctx.patch_port("gone", "/pxe_enabled", False)
    ctx.patch_port("kept", "/pxe_enabled", True)
    client = Recorder(gone="gone")
    apply_to_ironic(client, ctx)
    assert client.calls == [("patch_port", "kept")]
