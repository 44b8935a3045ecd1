"""What a BMC's inventory is worth: the required facts it lacks, and the
merge with a ramdisk's inventory when the ramdisk had to fill them.

Pure (no I/O). Provenance is kept per fact, a top-level key of the
inventory (``cpu``, ``memory``, ``disks``, ``interfaces``,
``system_vendor``, ``boot``): ``redfish`` or ``ramdisk``.
"""

from collections.abc import Iterable
from typing import Any

from inspector import macs

REDFISH = "redfish"
RAMDISK = "ramdisk"

MIN_MEMORY_MB = 1024
"""Less is taken as a BMC's mistake (Ironic 39 fails such a node)."""
MIN_ROOT_DISK_BYTES = 4 * 1024**3
"""The smallest disk that can hold an image (the root disk hook's bound)."""

PROVENANCE_KEY = "provenance"
DISAGREEMENTS_KEY = "disagreements"


def _macs(inventory: dict[str, Any]) -> set[str]:
    found = set()
    for iface in inventory.get("interfaces") or []:
        if isinstance(iface, dict):
            mac = macs.normalise(iface.get("mac_address"))
            if mac:
                found.add(mac)
    return found


def missing(inventory: dict[str, Any], required: Iterable[str]) -> list[str]:
    """The ``required`` facts (``[redfish]required_facts``) that
    ``inventory`` lacks or gives implausibly, each with why."""
    cpu = inventory.get("cpu") or {}
    memory = inventory.get("memory") or {}
    disks = [d for d in inventory.get("disks") or [] if isinstance(d, dict)]
    problems = []
    for fact in required:
        if fact == "cpus":
            count = cpu.get("count")
            if not isinstance(count, int) or count <= 0:
                problems.append("cpus (no CPU count)")
            elif not cpu.get("architecture"):
                problems.append("cpus (no CPU architecture)")
        elif fact == "memory_mb":
            mb = memory.get("physical_mb")
            if not isinstance(mb, int) or mb <= 0:
                problems.append("memory_mb (no memory size)")
            elif mb < MIN_MEMORY_MB:
                problems.append(f"memory_mb ({mb} MiB is implausibly small)")
        elif fact == "local_gb":
            if not any(
                isinstance(d.get("size"), int) and d["size"] >= MIN_ROOT_DISK_BYTES
                for d in disks
            ):
                problems.append(
                    "local_gb (no drive of at least 4 GiB)"
                    if disks
                    else "local_gb (no drives)"
                )
        elif fact == "macs":
            if not _macs(inventory):
                problems.append("macs (no NIC with a MAC address)")
    return problems


def _summary(fact: str, value: Any) -> Any:
    """What two sources are compared on for ``fact`` (None: not compared)."""
    if not value:
        return None
    if fact == "cpu":
        return {"count": value.get("count"), "architecture": value.get("architecture")}
    if fact == "memory":
        return value.get("physical_mb")
    if fact == "disks":
        return sorted(d.get("size") or 0 for d in value if isinstance(d, dict))
    if fact == "interfaces":
        return sorted(_macs({"interfaces": value}))
    return None


def merge(
    bmc: dict[str, Any], ramdisk: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, str], list[dict[str, Any]]]:
    """The inventory of a fallback run: the ramdisk's facts where it has
    them (it saw the hardware from inside), the BMC's where it has not.

    Returns the merged inventory, the provenance of each fact and the
    disagreements (fact, both values compared) where both gave one.
    """
    merged = dict(bmc)
    provenance = {fact: REDFISH for fact in bmc}
    disagreements = []
    for fact, value in ramdisk.items():
        if value in (None, [], {}, ""):
            continue
        if fact in bmc:
            theirs, ours = _summary(fact, bmc[fact]), _summary(fact, value)
            if theirs is not None and ours is not None and theirs != ours:
                disagreements.append({"fact": fact, REDFISH: theirs, RAMDISK: ours})
        merged[fact] = value
        provenance[fact] = RAMDISK
    return merged, provenance, disagreements


def merge_data(bmc_data: dict[str, Any], data: dict[str, Any]) -> list[dict[str, Any]]:
    """A fallback run's ramdisk ``data`` (changed in place) with what the
    BMC told (``bmc_data``, as :meth:`Collected.data` made it): the merged
    inventory, each fact's provenance, the disagreements and the BMC's
    notes. Returns the disagreements."""
    inventory = data.get("inventory")
    merged, provenance, disagreements = merge(
        bmc_data.get("inventory") or {},
        inventory if isinstance(inventory, dict) else {},
    )
    data["inventory"] = merged
    data[PROVENANCE_KEY] = provenance
    data[DISAGREEMENTS_KEY] = disagreements
    data["redfish"] = bmc_data.get("redfish") or {}
    return disagreements
