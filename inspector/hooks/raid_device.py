"""raid_device: point root device hints at a RAID volume made since the last
introspection."""

import logging
from typing import Any

from inspector.hooks.base import Data, NodeContext, ProcessingHook

LOG = logging.getLogger(__name__)


def _identities(data: Data) -> dict[str, tuple[str, str]]:
    """identity -> (hint name, value): the serial, or the name without one."""
    inventory = data.get("inventory")
    disks = inventory.get("disks") if isinstance(inventory, dict) else None
    found = {}
    for disk in disks if isinstance(disks, list) else []:
        if not isinstance(disk, dict):
            continue
        serial, name = disk.get("serial"), disk.get("name")
        if isinstance(serial, str) and serial:
            found[serial] = ("serial", serial)
        elif isinstance(name, str) and name:
            found[name] = ("name", name)
    return found


class RaidDeviceHook(ProcessingHook):
    """Reads ``inventory.disks`` and the node's ``extra.block_devices``.
    The first introspection records the disks' serials (or names) in
    ``extra.block_devices``; the next one, after a RAID volume was built,
    finds the one new disk and sets ``properties.root_device`` to its serial
    (or name) and removes ``extra.block_devices``. No new disk, or several,
    leaves the node as it is, with a warning."""

    def before_update(self, data: Data, ctx: NodeContext) -> None:
        current = _identities(data)
        previous: Any = ctx.current("/extra/block_devices")
        if not isinstance(previous, dict) or not isinstance(
            previous.get("serials"), list
        ):
            ctx.patch("/extra/block_devices", {"serials": sorted(current)})
            return
        new = sorted(set(current) - set(map(str, previous["serials"])))
        if len(new) != 1:
            LOG.warning(
                "Node %s: expected one new block device for the RAID root "
                "device, found %s",
                ctx.uuid,
                ", ".join(new) or "none",
            )
            return
        hint, value = current[new[0]]
        ctx.patch("/properties/root_device", {hint: value})
        ctx.remove("/extra/block_devices")
        LOG.info(
            "Node %s: root device is the new RAID volume (%s %s)", ctx.uuid, hint, value
        )
