"""lldp_basic and local_link_connection: what the switches told each NIC."""

import logging
from typing import Any

from inspector.hooks import lldp
from inspector.hooks.base import Data, NodeContext, ProcessingHook

LOG = logging.getLogger(__name__)


def _by_interface(data: Data) -> dict[str, dict[str, Any]]:
    """Decoded LLDP per NIC name, for NICs validate_interfaces kept."""
    known = data.get("all_interfaces") or {}
    inventory = data.get("inventory") or {}
    result = {}
    for iface in inventory.get("interfaces") or []:
        if not isinstance(iface, dict) or iface.get("name") not in known:
            continue
        fields, skipped = lldp.parse(iface.get("lldp"))
        if skipped:
            LOG.warning(
                "Skipped %d malformed LLDP TLVs of interface %s", skipped, iface["name"]
            )
        if fields:
            result[iface["name"]] = fields
    return result


class LldpBasicHook(ProcessingHook):
    """Reads ``inventory.interfaces[*].lldp`` (raw TLVs); writes
    ``all_interfaces.<name>.lldp_processed``: switch_chassis_id,
    switch_port_id, switch_system_name, switch_port_description,
    switch_port_vlans, switch_port_untagged_vlan_id, switch_port_mtu,
    link aggregation, autonegotiation, management addresses and
    capabilities, as far as the switch sent them. Nothing in Ironic."""

    dependencies = ("validate_interfaces",)

    def before_update(self, data: Data, ctx: NodeContext) -> None:
        for name, fields in _by_interface(data).items():
            data["all_interfaces"][name]["lldp_processed"] = fields


def _is_mac(value: Any) -> bool:
    parts = str(value).split(":")
    return len(parts) == 6 and all(len(p) == 2 for p in parts)


class LocalLinkConnectionHook(ProcessingHook):
    """Reads ``inventory.interfaces[*].lldp``; writes each Ironic port's
    ``local_link_connection`` (``switch_id``: the chassis MAC, ``port_id``,
    ``switch_info``: the switch's name) for the ports it can, both existing
    ones and those created in this run. A NIC whose switch does not send its
    chassis as a MAC address, or no port id, is left alone: Ironic would
    refuse it."""

    dependencies = ("validate_interfaces",)

    def before_update(self, data: Data, ctx: NodeContext) -> None:
        for name, fields in _by_interface(data).items():
            connection = self._connection(fields)
            mac = data["all_interfaces"][name]["mac"]
            if connection is None:
                LOG.info(
                    "Node %s interface %s: LLDP gives no switch MAC and port "
                    "id, local_link_connection not set",
                    ctx.uuid,
                    name,
                )
                continue
            ctx.set_port_field(mac, "local_link_connection", connection)

    @staticmethod
    def _connection(fields: dict[str, Any]) -> dict[str, str] | None:
        switch_id = fields.get("switch_chassis_id")
        port_id = fields.get("switch_port_id")
        if not _is_mac(switch_id) or not port_id:
            return None
        connection = {"switch_id": str(switch_id), "port_id": str(port_id)}
        if fields.get("switch_system_name"):
            connection["switch_info"] = str(fields["switch_system_name"])
        return connection
