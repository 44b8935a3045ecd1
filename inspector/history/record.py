"""The hardware record of one run: processed ramdisk data made compact.

:func:`summarise` reads the data as the processing hooks leave it (the
ramdisk's ``inventory``, ``root_disk``, ``boot_interface``, the
``local_gb`` the scheduler hook computed, the ``extra`` of the
extra-hardware hook, the LLDP the ``lldp_basic`` hook decoded, or the raw
TLVs when that hook is off) and gives three things: the record (one dict,
components by kind and identity), the facts of the fleet view (one value
per column) and the links of the cabling view (one per NIC).

The record is bounded whatever the ramdisk sends: at most
:data:`MAX_DISKS` disks, :data:`MAX_NICS` NICs, :data:`MAX_DIMMS` DIMMs
and :data:`MAX_VLANS` VLAN ids per NIC (the lowest identities, or the
lowest VLAN ids, are kept: the same ones every run, so a cap never shows
as a change), and every string cut to :data:`MAX_TEXT` characters. A
typical server's record is 2-4 KiB of JSON; the caps bound the worst
case to some tens of KiB. No I/O here.
"""

import dataclasses
from typing import Any

from inspector import macs
from inspector.hooks import lldp
from inspector.hooks.interfaces import boot_mac

MAX_DISKS = 64
MAX_NICS = 32
MAX_DIMMS = 48
MAX_VLANS = 16
MAX_TEXT = 128

GiB = 1024**3

Record = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Summary:
    """What one run's processed data says about the machine."""

    record: Record
    facts: dict[str, Any]
    """``cpus``, ``cpu_model``, ``cpu_arch``, ``memory_mb``, ``local_gb``,
    ``disks`` and ``nics`` (counts), ``vendor``, ``product``, ``serial``,
    ``bios_version``; None where the data does not say."""
    links: list[dict[str, Any]]
    """Per NIC: ``mac``, ``name``, ``pxe``, ``switch_id``, ``switch_name``,
    ``port_id`` (the switch fields None without LLDP data)."""


def _text(value: Any) -> str | None:
    """A string as kept: stripped, cut, None when empty or not a scalar."""
    if value is None or isinstance(value, (dict, list, bool)):
        return None
    text = str(value).strip()
    return text[:MAX_TEXT] or None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _system(inventory: dict[str, Any]) -> dict[str, Any]:
    vendor = _dict(inventory.get("system_vendor"))
    return {
        "vendor": _text(vendor.get("manufacturer")),
        "product": _text(vendor.get("product_name")),
        "serial": _text(vendor.get("serial_number")),
        "bios_version": _text(_dict(vendor.get("firmware")).get("version")),
    }


def _cpu(inventory: dict[str, Any]) -> dict[str, Any]:
    cpu = _dict(inventory.get("cpu"))
    return {
        "model": _text(cpu.get("model_name")),
        "count": _int(cpu.get("count")),
        "architecture": _text(cpu.get("architecture")),
    }


def _memory_mb(data: dict[str, Any], inventory: dict[str, Any]) -> int | None:
    """The MiB Ironic gets: ``memory.physical_mb``, else what the scheduler
    hook derived from ``memory.total``."""
    physical = _int(_dict(inventory.get("memory")).get("physical_mb"))
    if physical is not None and physical > 0:
        return physical
    return _int(data.get("memory_mb"))


def _disks(inventory: dict[str, Any]) -> dict[str, dict[str, Any]]:
    disks: dict[str, dict[str, Any]] = {}
    for disk in inventory.get("disks") or []:
        if not isinstance(disk, dict):
            continue
        entry: dict[str, Any] = {
            "name": _text(disk.get("name")),
            "size": _int(disk.get("size")),
            "model": _text(disk.get("model")),
            "serial": _text(disk.get("serial")),
            "wwn": _text(disk.get("wwn")),
        }
        identity = _text(entry["serial"] or entry["wwn"] or entry["name"])
        if identity is not None and identity not in disks:
            disks[identity] = entry
    return {key: disks[key] for key in sorted(disks)[:MAX_DISKS]}


def _switch(data: dict[str, Any], iface: dict[str, Any]) -> dict[str, Any]:
    """The NIC's LLDP fields: as ``lldp_basic`` decoded them, else decoded
    here from the raw TLVs."""
    processed = _dict(_dict(data.get("all_interfaces")).get(str(iface.get("name"))))
    fields = processed.get("lldp_processed")
    if not isinstance(fields, dict):
        fields, _skipped = lldp.parse(iface.get("lldp"))
    vlans = sorted(
        {
            vlan_id
            for vlan in fields.get("switch_port_vlans") or []
            if isinstance(vlan, dict) and (vlan_id := _int(vlan.get("id"))) is not None
        }
    )
    return {
        "switch_chassis_id": _text(fields.get("switch_chassis_id")),
        "switch_system_name": _text(fields.get("switch_system_name")),
        "switch_port_id": _text(fields.get("switch_port_id")),
        "vlans": vlans[:MAX_VLANS],
    }


def _nics(data: dict[str, Any], inventory: dict[str, Any]) -> dict[str, dict[str, Any]]:
    nics: dict[str, dict[str, Any]] = {}
    for iface in inventory.get("interfaces") or []:
        if not isinstance(iface, dict):
            continue
        mac = macs.normalise(iface.get("mac_address"))
        if mac is None or mac in nics:
            continue
        nics[mac] = {
            "name": _text(iface.get("name")),
            "pci_address": _text(iface.get("pci_address")),
            "speed_mbps": _int(iface.get("speed_mbps")),
            **_switch(data, iface),
        }
    return {key: nics[key] for key in sorted(nics)[:MAX_NICS]}


def _dimms(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """DIMMs from the extra-hardware data (``extra.memory.bank*``, as the
    ``hardware`` library names them), by serial, else slot, else bank."""
    dimms: dict[str, dict[str, Any]] = {}
    memory = _dict(_dict(data.get("extra")).get("memory"))
    for bank, values in sorted(memory.items()):
        if not str(bank).startswith("bank") or not isinstance(values, dict):
            continue
        entry = {
            key: _text(values.get(key))
            for key in ("slot", "size", "serial", "vendor", "product", "clock")
        }
        identity = entry["serial"] or entry["slot"] or _text(bank)
        if identity is not None and identity not in dimms:
            dimms[identity] = entry
    return {key: dimms[key] for key in sorted(dimms)[:MAX_DIMMS]}


def _bmc(inventory: dict[str, Any]) -> dict[str, Any]:
    """The BMC's addresses; the ramdisk's "none" values are None."""
    ipv4 = _text(inventory.get("bmc_address"))
    ipv6 = _text(inventory.get("bmc_v6address"))
    return {
        "ipv4": None if ipv4 in (None, "0.0.0.0") else ipv4,
        "ipv6": None if ipv6 in (None, "::", "::/0") else ipv6,
    }


def build(data: dict[str, Any]) -> Record:
    """The hardware record of processed ``data``."""
    inventory = _dict(data.get("inventory"))
    return {
        "system": _system(inventory),
        "cpu": _cpu(inventory),
        "memory": {"total_mb": _memory_mb(data, inventory)},
        "dimms": _dimms(data),
        "disks": _disks(inventory),
        "nics": _nics(data, inventory),
        "bmc": _bmc(inventory),
    }


def _local_gb(data: dict[str, Any]) -> int | None:
    """What the scheduler hook gave Ironic; without that hook, the root
    disk's whole GiB."""
    local_gb = _int(data.get("local_gb"))
    if local_gb is not None:
        return local_gb
    size = _int(_dict(data.get("root_disk")).get("size"))
    return None if size is None else size // GiB


def facts(data: dict[str, Any], record: Record) -> dict[str, Any]:
    """The fleet view's facts of a run whose record is ``record``."""
    system, cpu = record["system"], record["cpu"]
    return {
        "cpus": cpu["count"],
        "cpu_model": cpu["model"],
        "cpu_arch": cpu["architecture"],
        "memory_mb": record["memory"]["total_mb"],
        "local_gb": _local_gb(data),
        "disks": len(record["disks"]),
        "nics": len(record["nics"]),
        "vendor": system["vendor"],
        "product": system["product"],
        "serial": system["serial"],
        "bios_version": system["bios_version"],
    }


def links(data: dict[str, Any], record: Record) -> list[dict[str, Any]]:
    """One entry per NIC of ``record``, for the cabling view."""
    pxe_mac = boot_mac(data)
    return [
        {
            "mac": mac,
            "name": nic["name"],
            "pxe": mac == pxe_mac,
            "switch_id": nic["switch_chassis_id"],
            "switch_name": nic["switch_system_name"],
            "port_id": nic["switch_port_id"],
        }
        for mac, nic in record["nics"].items()
    ]


def summarise(data: dict[str, Any]) -> Summary:
    """The record, facts and links of processed ``data``."""
    record = build(data)
    return Summary(record, facts(data, record), links(data, record))
