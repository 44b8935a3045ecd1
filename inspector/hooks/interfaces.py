"""validate_interfaces: NICs from the inventory, and the Ironic ports to match."""

import ipaddress
import logging
from typing import Any

from inspector import exceptions, macs
from inspector.hooks.base import Data, NodeContext, ProcessingHook

LOG = logging.getLogger(__name__)


def boot_mac(data: Data) -> str | None:
    """The MAC the node booted from: ``boot_interface`` as a MAC or PXE name."""
    value = data.get("boot_interface")
    if not isinstance(value, str):
        boot = (data.get("inventory") or {}).get("boot") or {}
        value = boot.get("pxe_interface") if isinstance(boot, dict) else None
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    if text.startswith("01-") and len(text) == 20:
        text = text[3:]
    return macs.normalise(text)


def _routable_ip(iface: dict[str, Any]) -> str | None:
    """The NIC's address, if it has one that shows a configured network.

    Every NIC with IPv6 enabled has a link-local fe80:: address, so such an
    address says nothing about the NIC being connected and is ignored.
    """
    for key in ("ipv4_address", "ipv6_address"):
        value = iface.get(key)
        if not isinstance(value, str) or not value:
            continue
        try:
            address = ipaddress.ip_address(value.split("%")[0])
        except ValueError:
            continue
        if not address.is_link_local:
            return str(address)
    return None


class ValidateInterfacesHook(ProcessingHook):
    """Reads ``inventory.interfaces`` and ``boot_interface``; writes
    ``all_interfaces``, ``interfaces`` (the NICs ``add_ports`` selects),
    ``macs`` and ``boot_interface`` (a MAC), and Ironic port changes."""

    def before_processing(self, data: Data) -> None:
        inventory = data.get("inventory") or {}
        pxe_mac = boot_mac(data)
        all_interfaces: dict[str, dict[str, Any]] = {}
        for iface in inventory.get("interfaces") or []:
            if not isinstance(iface, dict):
                continue
            mac = macs.normalise(iface.get("mac_address"))
            name = iface.get("name")
            if not mac or not isinstance(name, str):
                LOG.debug("Skipping interface without a valid MAC: %s", iface)
                continue
            all_interfaces[name] = {
                "ip": _routable_ip(iface),
                "mac": mac,
                "client_id": iface.get("client_id"),
                "pxe": pxe_mac is None or mac == pxe_mac,
            }
        if not all_interfaces:
            raise exceptions.ProcessingError(
                "No network interfaces with a valid MAC address were reported by "
                "the ramdisk"
            )
        data["all_interfaces"] = all_interfaces
        data["boot_interface"] = pxe_mac
        data["interfaces"] = self._selected(all_interfaces, pxe_mac)
        data["macs"] = [i["mac"] for i in data["interfaces"].values()]

    def _selected(
        self, all_interfaces: dict[str, dict[str, Any]], pxe_mac: str | None
    ) -> dict[str, dict[str, Any]]:
        mode = self.conf.processing.add_ports
        if mode == "disabled":
            return {}
        if mode == "all":
            return dict(all_interfaces)
        active = {n: i for n, i in all_interfaces.items() if i["ip"]}
        if mode == "pxe" and pxe_mac is not None:
            return {n: i for n, i in all_interfaces.items() if i["mac"] == pxe_mac}
        return active

    def before_update(self, data: Data, ctx: NodeContext) -> None:
        all_macs = {i["mac"] for i in data.get("all_interfaces", {}).values()}
        selected = data.get("interfaces", {})
        pxe_mac = data.get("boot_interface")
        for iface in selected.values():
            if iface["mac"] not in ctx.ports:
                ctx.ports_to_create.append(
                    {
                        "address": iface["mac"],
                        "pxe_enabled": pxe_mac is None or iface["mac"] == pxe_mac,
                        # lets the reconcile tell our ports from others
                        "extra": {"created_by": "ironic-inspector"},
                    }
                )
        keep = self.conf.processing.keep_ports
        wanted = None
        if keep == "present":
            wanted = all_macs
        elif keep == "added":
            wanted = {i["mac"] for i in selected.values()}
        if wanted is not None:
            for mac, port in ctx.ports.items():
                if mac not in wanted:
                    ctx.ports_to_delete.append(port["uuid"])
        if self.conf.processing.update_pxe_enabled and pxe_mac is not None:
            deleted = set(ctx.ports_to_delete)
            for mac, port in ctx.ports.items():
                should = mac == pxe_mac
                if port["uuid"] not in deleted and port.get("pxe_enabled") != should:
                    ctx.patch_port(port["uuid"], "/pxe_enabled", should)
