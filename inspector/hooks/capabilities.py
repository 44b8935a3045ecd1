"""capabilities: boot mode and CPU features as Ironic node capabilities."""

import logging

from inspector.hooks.base import Data, NodeContext, ProcessingHook

LOG = logging.getLogger(__name__)


def parse(text: object) -> dict[str, str]:
    """Ironic's ``properties.capabilities``: "k1:v1,k2:v2" (or a dict)."""
    if isinstance(text, dict):
        return {str(k): str(v) for k, v in text.items()}
    result: dict[str, str] = {}
    if isinstance(text, str):
        for item in text.split(","):
            key, sep, value = item.partition(":")
            if sep and key.strip():
                result[key.strip()] = value.strip()
    return result


def render(capabilities: dict[str, str]) -> str:
    return ",".join(f"{k}:{v}" for k, v in capabilities.items())


def update(ctx: NodeContext, new: dict[str, str]) -> None:
    """Merge ``new`` into the node's capabilities, patching only on change."""
    current = parse(ctx.properties.get("capabilities"))
    for patch in ctx.node_patches:  # an earlier hook may have set some already
        if patch["path"] == "/properties/capabilities":
            current = parse(patch["value"])
    merged = {**current, **new}
    if merged != current:
        ctx.node_patches[:] = [
            p for p in ctx.node_patches if p["path"] != "/properties/capabilities"
        ]
        ctx.patch("/properties/capabilities", render(merged))


class CapabilitiesHook(ProcessingHook):
    """Reads ``inventory.boot.current_boot_mode`` and ``inventory.cpu.flags``;
    writes ``boot_mode`` (only with ``[capabilities]boot_mode``) and the CPU
    capabilities of ``[capabilities]cpu_flags`` into
    ``properties.capabilities`` (other capabilities are kept)."""

    def before_update(self, data: Data, ctx: NodeContext) -> None:
        inventory = data.get("inventory") or {}
        new: dict[str, str] = {}
        options = self.conf.capabilities
        boot = inventory.get("boot") or {}
        mode = boot.get("current_boot_mode") if isinstance(boot, dict) else None
        if options.boot_mode and mode in ("uefi", "bios"):
            new["boot_mode"] = mode
        flags = (inventory.get("cpu") or {}).get("flags") or []
        for flag, capability in options.cpu_flags.items():
            if flag in flags:
                new[capability] = "true"
        if new:
            update(ctx, new)
            LOG.info("Node %s capabilities: %s", ctx.uuid, render(new))
