"""Lab machines as Redfish systems, and their Ironic nodes pointed at them:
the one mapping the out-of-band demo and benchmark share.

A lab machine (:mod:`lab.machines.hardware`) becomes a system of its own size: its
CPUs, memory, disks and NICs (the PXE NIC first), as sushy-tools' emulator
takes it (:func:`emulated`) or as a static BMC serves it (:func:`static`,
with the machine's vendor, serial and the LLDP its switches send).
"""

import dataclasses
import uuid as uuidlib
from typing import Any

from lab.machines.enroll import IronicAPI
from lab.machines.hardware import GiB, Machine
from lab.machines.redfish_static import StaticSystem
from lab.servers.redfish_emulator import EmulatedMachine
from lab.waiting import wait_until

MAX_EMULATED_CPUS = 64
"""An emulated system's CPU count is the machine's, up to this."""


def nic_macs(machine: Machine) -> list[str]:
    """The machine's MACs, its PXE NIC first (the BMC's first NIC)."""
    return [machine.pxe_mac] + [m for m in machine.macs if m != machine.pxe_mac]


def emulated(
    machine: Machine, namespace: str, with_disk: bool = True
) -> EmulatedMachine:
    """``machine`` as a domain of the emulator; its UUID derives from
    ``namespace`` and its name. Without a disk the BMC's answer lacks
    ``local_gb`` (an ``auto`` start falls back to the ramdisk)."""
    return EmulatedMachine(
        machine.name,
        str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"{namespace}-{machine.name}")),
        nic_macs(machine),
        cpus=min(machine.cpus, MAX_EMULATED_CPUS),
        memory_gib=max(1, machine.memory_mb // 1024),
        disk_gib=machine.smallest_disk_gib if with_disk else 0,
    )


def static(machine: Machine, with_disks: bool = True) -> StaticSystem:
    """``machine`` as the one system of a static BMC (``Systems/1``)."""
    vendor = machine.inventory["system_vendor"]
    return StaticSystem(
        "1",
        nic_macs(machine),
        cpus=machine.cpus,
        memory_gib=machine.memory_mb / 1024,
        drives_gib=[d["size"] // GiB for d in machine.inventory["disks"]]
        if with_disks
        else [],
        lldp=_lldp(machine),
        vendor=vendor["manufacturer"],
        model=vendor["product_name"],
        serial=vendor["serial_number"],
    )


def _lldp(machine: Machine) -> dict[str, dict[str, Any]]:
    """Redfish's LLDPReceive by MAC, from the TLVs the machine's ramdisk
    would report (chassis MAC, port name, switch name)."""
    found = {}
    for nic in machine.inventory["interfaces"]:
        tlvs = {kind: value for kind, value in nic.get("lldp") or []}
        if 1 not in tlvs or 2 not in tlvs:
            continue
        chassis = str(tlvs[1])[2:]
        found[nic["mac_address"]] = {
            "ChassisId": ":".join(chassis[i : i + 2] for i in range(0, 12, 2)),
            "ChassisIdSubtype": "MacAddr",
            "PortId": bytes.fromhex(str(tlvs[2])[2:]).decode(),
            "PortIdSubtype": "IfName",
            "SystemName": bytes.fromhex(str(tlvs.get(5, ""))).decode(),
        }
    return found


@dataclasses.dataclass(frozen=True)
class MachineBmc:
    """Where one machine's Redfish system is, as a node's driver_info names it."""

    name: str
    address: str
    system_id: str
    username: str
    password: str

    def driver_info(self) -> dict[str, str]:
        return {
            "redfish_address": self.address,
            "redfish_system_id": self.system_id,
            "redfish_username": self.username,
            "redfish_password": self.password,
        }


def point_at(api: IronicAPI, node: str, bmc: MachineBmc) -> None:
    """Add ``bmc`` to the node's driver_info."""
    api.request(
        "PATCH",
        f"/v1/nodes/{node}",
        json=[
            {"op": "add", "path": f"/driver_info/{k}", "value": v}
            for k, v in bmc.driver_info().items()
        ],
    )


def ironic_redfish_node(
    api: IronicAPI, name: str, bmc: MachineBmc, emulated_bmc: bool = True
) -> str:
    """A node of Ironic's redfish driver at ``bmc``, inspect interface
    redfish (Ironic's own out-of-band inspection), made manageable (Ironic's
    manage checks the BMC); its UUID."""
    driver_info: dict[str, Any] = bmc.driver_info()
    if emulated_bmc:
        # sushy-tools' emulator has no sessions: skip Ironic's attempt
        driver_info["redfish_auth_type"] = "basic"
    node = api.request(
        "POST",
        "/v1/nodes",
        json={
            "name": name,
            "driver": "redfish",
            "inspect_interface": "redfish",
            "driver_info": driver_info,
        },
    )
    uuid = str(node["uuid"])
    api.request("PUT", f"/v1/nodes/{uuid}/states/provision", json={"target": "manage"})
    state = wait_until(
        lambda: api.node(uuid)["provision_state"],
        60,
        f"{uuid} to be manageable",
        until=lambda state: state in ("manageable", "enroll"),
        interval=0.2,
    )
    if state != "manageable":
        raise RuntimeError(f"{uuid} stayed in {state}: {api.node(uuid)['last_error']}")
    return uuid
