"""The processing hook interface and the per-node context hooks write into."""

import dataclasses
from typing import Any

from oslo_config import cfg

Data = dict[str, Any]


@dataclasses.dataclass
class NodeContext:
    """What hooks know about the Ironic node and what they ask to change.

    Hooks never call Ironic themselves: they record JSON patches and port
    changes here, and the processing pipeline applies them in as few Ironic
    calls as it can.
    """

    uuid: str
    node: Data
    """The Ironic node as JSON (``properties``, ``driver_info``, ...)."""
    ports: dict[str, Data]
    """Existing Ironic ports of the node, by lower-case MAC address."""
    node_patches: list[Data] = dataclasses.field(default_factory=list)
    ports_to_create: list[Data] = dataclasses.field(default_factory=list)
    """Port bodies: ``address``, ``pxe_enabled`` and optional fields."""
    ports_to_delete: list[str] = dataclasses.field(default_factory=list)
    """UUIDs of Ironic ports to delete."""
    port_patches: dict[str, list[Data]] = dataclasses.field(default_factory=dict)
    """JSON patches per Ironic port UUID."""
    traits_to_add: list[str] = dataclasses.field(default_factory=list)
    traits_to_remove: list[str] = dataclasses.field(default_factory=list)

    def patch(self, path: str, value: Any) -> None:
        """Set ``path`` (e.g. ``/properties/cpus``) on the node."""
        self.node_patches.append({"op": "add", "path": path, "value": value})

    def remove(self, path: str) -> None:
        self.node_patches.append({"op": "remove", "path": path})

    def set_port_field(self, mac: str, field: str, value: Any) -> None:
        """``field`` of the port with ``mac``: in its body when this run
        creates it, a patch when it exists with another value."""
        for body in self.ports_to_create:
            if body.get("address") == mac:
                body[field] = value
                return
        port = self.ports.get(mac)
        if port is not None and port.get(field) != value:
            self.patch_port(port["uuid"], f"/{field}", value)

    def patch_port(self, port_uuid: str, path: str, value: Any) -> None:
        self.port_patches.setdefault(port_uuid, []).append(
            {"op": "add", "path": path, "value": value}
        )

    def current(self, path: str) -> Any:
        """The value at ``path`` once the recorded node patches are applied
        (None when absent): what a later hook or rule action builds on."""
        value: Any = None
        for patch in self.node_patches:
            if patch["path"] == path:
                value = patch.get("value") if patch["op"] != "remove" else None
        if any(p["path"] == path for p in self.node_patches):
            return value
        found: Any = self.node
        for part in path.strip("/").split("/"):
            if not isinstance(found, dict) or part not in found:
                return None
            found = found[part]
        return found

    @property
    def properties(self) -> Data:
        props = self.node.get("properties")
        return props if isinstance(props, dict) else {}


class ProcessingHook:
    """Base class for processing hooks (entry point group
    ``ironic_inspector.hooks.processing``).

    ``before_processing`` runs on the raw data before anything else and may
    normalise or reject it; ``before_update`` runs with the node context and
    records what should be written to Ironic. Raise
    :class:`inspector.exceptions.ProcessingError` with a message an operator
    can act on to end the introspection in ``error``.
    """

    dependencies: tuple[str, ...] = ()
    """Names of hooks that must run before this one."""

    name: str = ""
    """The entry point name, set when the pipeline loads the hook."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.conf = conf

    def before_processing(self, data: Data) -> None:
        """Inspect or normalise the raw ramdisk data."""

    def before_update(self, data: Data, ctx: NodeContext) -> None:
        """Record node and port changes for Ironic in ``ctx``."""
