"""Asking one system's BMC what the hardware is, through sushy, in the
shape of the inventory ironic-python-agent posts.

A fact the BMC cannot give (a collection it lacks, a sub-resource that
breaks sushy, like a storage controller with no drives) is left out and
noted, never fatal: :mod:`inspector.redfish.provenance` judges what is missing.
What is fatal (the BMC unreachable, the credentials refused, no such
system, an answer that is not Redfish JSON) raises :class:`BmcError`
naming the BMC and the cause.
"""

import dataclasses
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

import sushy

from inspector import exceptions, macs
from inspector.redfish import provenance
from inspector.redfish.credentials import BmcCredentials
from inspector.redfish.sessions import Sessions, bmc_error

LOG = logging.getLogger(__name__)

GiB = 1024**3
SYSTEMS = "/redfish/v1/Systems/"

_ARCHITECTURES = {
    "x86-64": "x86_64",
    "x86": "i686",
    "ARM-A64": "aarch64",
    "ARM-A32": "armhf",
    "PowerISA": "ppc64le",
    "IA-64": "ia64",
    "MIPS64": "mips64",
}
_CHASSIS_SUBTYPES = {"MacAddr": 4, "NetworkAddr": 5, "IfName": 6, "LocalAssign": 7}
_PORT_SUBTYPES = {"MacAddr": 3, "NetworkAddr": 4, "IfName": 5, "LocalAssign": 7}


@dataclasses.dataclass
class Collected:
    """What one BMC told: the inventory and what it could not tell."""

    inventory: dict[str, Any]
    notes: list[str] = dataclasses.field(default_factory=list)
    """The facts the BMC could not give, each with why."""

    def data(self, bmc: str) -> dict[str, Any]:
        """The data processed as a ramdisk's post would be."""
        return {
            "inventory": self.inventory,
            provenance.PROVENANCE_KEY: {
                fact: provenance.REDFISH for fact in self.inventory
            },
            "redfish": {"bmc": bmc, "notes": list(self.notes)},
        }


def system_path(system_id: str | None) -> str | None:
    if not system_id or system_id.startswith("/"):
        return system_id
    return SYSTEMS + system_id


def collect(sessions: Sessions, creds: BmcCredentials) -> Collected:
    """Ask ``creds``' BMC (holding one of its host's slots).

    :raises BmcError: the BMC could not be asked (see the module).
    """
    with sessions.slot(creds):
        try:
            return _collect(sessions, creds)
        except exceptions.BmcError:
            raise
        except sushy.exceptions.AccessError as exc:
            # a kept session the BMC dropped: one fresh login, then give up
            sessions.forget(creds)
            try:
                return _collect(sessions, creds)
            except Exception as again:
                raise bmc_error(creds, again) from exc
        except Exception as exc:
            raise bmc_error(creds, exc) from exc


def collect_within(
    sessions: Sessions, creds: BmcCredentials, budget: float
) -> Collected:
    """:func:`collect`, given up after ``budget`` seconds (mode ``auto``:
    ``[redfish]auto_budget``).

    The asking runs in a daemon thread of its own: past the budget, the
    caller goes on (boots the ramdisk) and the thread ends by itself within
    ``[redfish]timeout`` x (retries + 1), its answer dropped.

    :raises BmcError: the BMC could not be asked, or not within ``budget``.
    """
    answers: queue.Queue[tuple[Collected | None, BaseException | None]] = queue.Queue(
        maxsize=1
    )

    def ask() -> None:
        try:
            answers.put((collect(sessions, creds), None))
        except BaseException as exc:  # handed to the caller
            answers.put((None, exc))

    threading.Thread(target=ask, name=f"bmc-{creds.host}", daemon=True).start()
    try:
        collected, error = answers.get(timeout=budget)
    except queue.Empty:
        raise exceptions.BmcError(
            bmc=creds.describe(),
            reason=f"no answer within [redfish]auto_budget ({budget:g} s)",
        ) from None
    if error is not None:
        raise error
    assert collected is not None
    return collected


def _collect(sessions: Sessions, creds: BmcCredentials) -> Collected:
    root = sessions.root(creds)
    system = root.get_system(system_path(creds.system_id))
    out = Collected(inventory={})
    inventory = out.inventory

    def fact(name: str, read: Callable[[], Any]) -> None:
        try:
            value = read()
        except (sushy.exceptions.AccessError, sushy.exceptions.ConnectionError):
            raise  # the BMC, not this fact
        except Exception as exc:  # sushy's TypeError on an empty controller
            out.notes.append(f"{name}: {type(exc).__name__}: {exc}")
            LOG.info("%s gave no %s: %s", creds.describe(), name, exc)
            return
        if value in (None, [], {}):
            out.notes.append(f"{name}: not reported")
        else:
            inventory[name] = value

    fact("system_vendor", lambda: _vendor(system))
    fact("cpu", lambda: _cpu(system))
    fact("memory", lambda: _memory(system))
    fact("disks", lambda: _disks(system, out.notes))
    fact("interfaces", lambda: _interfaces(system, out.notes))
    fact("boot", lambda: _boot(system))
    return out


def _vendor(system: Any) -> dict[str, Any]:
    vendor = {
        "manufacturer": system.manufacturer,
        "product_name": system.model,
        "serial_number": system.serial_number,
        "sku": system.sku,
        "firmware": {"version": system.bios_version} if system.bios_version else None,
    }
    return {k: v for k, v in vendor.items() if v}


def _cpu(system: Any) -> dict[str, Any]:
    members = system.processors.get_members()
    count = 0
    model = arch = None
    for proc in members:
        if proc.processor_type is not None and str(proc.processor_type.value) != "CPU":
            continue
        count += proc.total_threads or proc.total_cores or 0
        model = model or proc.model
        if arch is None and proc.instruction_set is not None:
            arch = _ARCHITECTURES.get(str(proc.instruction_set.value))
        if arch is None and proc.processor_architecture is not None:
            arch = {"x86": "x86_64", "ARM": "aarch64", "Power": "ppc64le"}.get(
                str(proc.processor_architecture.value)
            )
    cpu: dict[str, Any] = {}
    if count:
        cpu["count"] = count
    if arch:
        cpu["architecture"] = arch
    if model:
        cpu["model_name"] = model
    return cpu


def _memory(system: Any) -> dict[str, Any]:
    # the raw value: sushy rounds it to a whole GiB (0 below 1 GiB)
    summary = (system.json or {}).get("MemorySummary") or {}
    gib = summary.get("TotalSystemMemoryGiB")
    if not isinstance(gib, (int, float)) or isinstance(gib, bool) or gib <= 0:
        return {}
    return {"physical_mb": int(gib * 1024), "total": int(gib * GiB)}


def _disks(system: Any, notes: list[str]) -> list[dict[str, Any]]:
    disks: list[dict[str, Any]] = []
    try:
        controllers = system.storage.get_members()
    except sushy.exceptions.MissingAttributeError:
        controllers = []
    for controller in controllers:
        try:
            drives = controller.drives
        except TypeError as exc:
            # sushy on a controller whose Drives is null or absent
            notes.append(
                f"disks: storage {controller.identity} listed no drives ({exc})"
            )
            continue
        for drive in drives:
            disks.append(
                {
                    "name": drive.name or drive.identity,
                    "size": drive.capacity_bytes or 0,
                    "model": drive.model,
                    "serial": drive.serial_number,
                    "vendor": drive.manufacturer,
                    "rotational": str(drive.media_type) == "HDD"
                    if drive.media_type
                    else None,
                    "media_type": drive.media_type,
                }
            )
    if disks:
        return disks
    try:
        simple = system.simple_storage.get_members()
    except sushy.exceptions.MissingAttributeError:
        return []
    for storage in simple:
        for device in storage.devices or []:
            if device.capacity_bytes:
                disks.append(
                    {
                        "name": device.name,
                        "size": device.capacity_bytes,
                        "model": device.model,
                    }
                )
    return disks


def _interfaces(system: Any, notes: list[str]) -> list[dict[str, Any]]:
    lldp = _lldp_by_mac(system, notes)
    nics = []
    for eth in system.ethernet_interfaces.get_members():
        raw = eth.json if isinstance(eth.json, dict) else {}
        mac = macs.normalise(eth.mac_address or eth.permanent_mac_address)
        if mac is None:
            notes.append(f"interfaces: {eth.identity} has no MAC address")
            continue
        link = raw.get("LinkStatus")
        nic: dict[str, Any] = {
            "name": eth.identity or mac,
            "mac_address": mac,
            "speed_mbps": eth.speed_mbps,
            "has_carrier": link == "LinkUp" if link else None,
            "ipv4_address": None,
        }
        if mac in lldp:
            nic["lldp"] = lldp[mac]
        nics.append(nic)
    return nics


def _boot(system: Any) -> dict[str, Any]:
    mode = system.boot.mode if system.boot else None
    if mode is None:
        return {}
    value = str(getattr(mode, "value", mode)).lower()
    return {"current_boot_mode": "uefi" if value == "uefi" else "bios"}


def _lldp_by_mac(system: Any, notes: list[str]) -> dict[str, list[list[Any]]]:
    """LLDP TLVs (ironic-python-agent's ``[type, hex]`` pairs) by NIC MAC,
    from ``Port.Ethernet.LLDPReceive`` of the system's chassis' adapters."""
    found: dict[str, list[list[Any]]] = {}
    try:
        for chassis in system.chassis:
            for adapter in chassis.network_adapters.get_members():
                for port in adapter.ports.get_members():
                    raw = port.json if isinstance(port.json, dict) else {}
                    ethernet = raw.get("Ethernet") or {}
                    received = ethernet.get("LLDPReceive")
                    if not isinstance(received, dict):
                        continue
                    tlvs = tlvs_of(received)
                    for mac in ethernet.get("AssociatedMACAddresses") or []:
                        mac = macs.normalise(mac)
                        if mac and tlvs:
                            found[mac] = tlvs
    except (sushy.exceptions.AccessError, sushy.exceptions.ConnectionError):
        raise
    except Exception as exc:  # no chassis, no adapters: no LLDP
        LOG.debug("No LLDP from the BMC: %s", exc)
    if not found:
        notes.append("lldp: not reported")
    return found


def _identifier(value: Any, subtype: Any, table: dict[str, int]) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    mac = macs.normalise(value)
    if mac is not None:
        code = table["MacAddr"]
        return f"{code:02x}" + mac.replace(":", "")
    code = table.get(str(subtype), table["LocalAssign"])
    if code == table["MacAddr"]:
        code = table["LocalAssign"]
    return f"{code:02x}" + value.encode().hex()


def tlvs_of(received: dict[str, Any]) -> list[list[Any]]:
    """Redfish's LLDPReceive as the raw TLVs a ramdisk would report."""
    tlvs: list[list[Any]] = []
    chassis = _identifier(
        received.get("ChassisId"), received.get("ChassisIdSubtype"), _CHASSIS_SUBTYPES
    )
    if chassis:
        tlvs.append([1, chassis])
    port = _identifier(
        received.get("PortId"), received.get("PortIdSubtype"), _PORT_SUBTYPES
    )
    if port:
        tlvs.append([2, port])
    for tlv_type, key in ((5, "SystemName"), (6, "SystemDescription")):
        text = received.get(key)
        if isinstance(text, str) and text:
            tlvs.append([tlv_type, text.encode().hex()])
    return tlvs
