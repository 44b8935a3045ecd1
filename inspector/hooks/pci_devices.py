"""pci_devices: count PCI devices matching configured aliases."""

import json
import logging
from typing import Any

from oslo_config import cfg

from inspector import exceptions
from inspector.hooks import capabilities
from inspector.hooks.base import Data, NodeContext, ProcessingHook

LOG = logging.getLogger(__name__)


def _aliases(conf: cfg.ConfigOpts) -> dict[tuple[str, str], str]:
    result: dict[tuple[str, str], str] = {}
    for text in conf.pci_devices.alias:
        try:
            alias: Any = json.loads(text)
            key = (str(alias["vendor_id"]).lower(), str(alias["product_id"]).lower())
            name = str(alias["name"])
        except (ValueError, KeyError, TypeError) as exc:
            raise exceptions.ConfigError(
                f"Invalid configuration: [pci_devices]alias {text!r}: expected a "
                f"JSON object with vendor_id, product_id and name ({exc})"
            ) from exc
        result[key] = name
    return result


class PciDevicesHook(ProcessingHook):
    """Reads ``pci_devices``; writes ``<alias name>:<count>`` capabilities for
    every ``[pci_devices]alias`` found."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        super().__init__(conf)
        self.aliases = _aliases(conf)

    def before_update(self, data: Data, ctx: NodeContext) -> None:
        if not self.aliases:
            return
        counts: dict[str, int] = {}
        for device in data.get("pci_devices") or []:
            if not isinstance(device, dict):
                continue
            key = (
                str(device.get("vendor_id", "")).lower(),
                str(device.get("product_id", "")).lower(),
            )
            name = self.aliases.get(key)
            if name:
                counts[name] = counts.get(name, 0) + 1
        if counts:
            capabilities.update(ctx, {k: str(v) for k, v in counts.items()})
            LOG.info("Node %s PCI devices: %s", ctx.uuid, counts)
