"""Lookup attributes: how a ramdisk's post is matched to a node."""

import ipaddress
import urllib.parse
from typing import Any

from oslo_config import cfg

from inspector import macs

MAC = "mac"
BMC = "bmc_address"


def host_of(value: Any) -> str | None:
    """The host part of a BMC address, which may be a URL or host:port."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        return str(ipaddress.ip_address(text.strip("[]")))
    except ValueError:
        pass
    try:
        host = urllib.parse.urlsplit(text if "://" in text else "//" + text).hostname
    except ValueError:  # e.g. an unbalanced "[": not an address to look up by
        return None
    return host.lower() if host else None


def from_data(data: dict[str, Any]) -> dict[str, list[str]]:
    """Attributes a ramdisk's post offers for lookup (MACs, BMC addresses)."""
    inventory = data.get("inventory")
    inventory = inventory if isinstance(inventory, dict) else {}
    found: list[str] = []
    interfaces = inventory.get("interfaces")
    if isinstance(interfaces, list):
        for iface in interfaces:
            if isinstance(iface, dict):
                mac = macs.normalise(iface.get("mac_address"))
                if mac:
                    found.append(mac)
    bmcs = []
    for key in ("bmc_address", "bmc_v6address"):
        host = host_of(inventory.get(key))
        if host and host not in ("0.0.0.0", "::"):
            bmcs.append(host)
    return {MAC: sorted(set(found)), BMC: sorted(set(bmcs))}


def from_node(
    conf: cfg.ConfigOpts, node: dict[str, Any], ports: list[dict[str, Any]]
) -> dict[str, list[str]]:
    """Attributes of an Ironic node: its ports' MACs and its BMC address."""
    known = {m for m in (macs.normalise(p.get("address")) for p in ports) if m}
    driver_info = node.get("driver_info") or {}
    fields = ["ipmi_address"] + [
        f for f in conf.ipmi_address_fields if f != "ipmi_address"
    ]
    bmcs = set()
    for field in fields:
        host = host_of(driver_info.get(field))
        if host:
            bmcs.add(host)
    return {MAC: sorted(known), BMC: sorted(bmcs)}
