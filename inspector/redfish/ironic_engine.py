"""``[redfish]engine = ironic``: Ironic's own ``redfish`` inspection asks
the BMC, and its stored inventory goes into our pipeline (doc/redfish.md).

Pure (no I/O, no sushy): the API refuses a start with it (400) and the
conductor's step (:mod:`inspector.conductor.ironic_inspection`) turns
Ironic's answer into the data a sushy collection gives.
"""

from typing import Any

from inspector import macs
from inspector.redfish import provenance

ENGINE = "ironic"
INSPECT_INTERFACE = "redfish"
INSPECTABLE_STATES = ("manageable", "inspect failed")
"""The provision states Ironic's ``inspect`` action starts from."""
BUSY_STATES = ("inspecting", "inspect wait")
"""Ironic's inspection is running (a resumed step waits for its end)."""
FAILED_STATE = "inspect failed"


def refusal(node: dict[str, Any]) -> str | None:
    """Why Ironic cannot run its redfish inspection of ``node`` now (the
    400 of a start in mode out-of-band; auto goes in-band), or None."""
    uuid = node.get("uuid")
    interface = node.get("inspect_interface")
    if interface != INSPECT_INTERFACE:
        return (
            f"Node {uuid} has inspect_interface {interface!r}: with "
            "[redfish]engine = ironic, Ironic's own redfish inspection asks "
            "the BMC, which needs inspect_interface 'redfish' (a driver "
            "that supports it, such as redfish): set it with 'baremetal "
            f"node set --inspect-interface redfish {uuid}', or use "
            "mode=in-band"
        )
    state = node.get("provision_state")
    if state not in INSPECTABLE_STATES:
        return (
            f"Node {uuid} is in provision state {state!r}: with "
            "[redfish]engine = ironic, Ironic inspects only from "
            f"{' or '.join(repr(s) for s in INSPECTABLE_STATES)}; move it "
            f"with 'baremetal node manage {uuid}', or use mode=in-band"
        )
    return None


def describe(node: dict[str, Any]) -> str:
    """The BMC as messages name it: its address, through Ironic."""
    info = node.get("driver_info") or {}
    address = info.get("redfish_address") if isinstance(info, dict) else None
    system = info.get("redfish_system_id") if isinstance(info, dict) else None
    where = f"BMC {address}" if address else "the BMC"
    if system:
        where += f" system {system}"
    return f"{where} (through Ironic's redfish inspection of node {node.get('uuid')})"


def _interfaces(found: Any, notes: list[str]) -> list[dict[str, Any]]:
    """Ironic's NICs with the keys a ramdisk's have (Ironic gives only
    name, MAC and speed), each MAC as the sushy path writes it: Ironic keeps
    the BMC's case in the inventory but stores its ports in lower case, and
    the ports step compares the two."""
    nics = []
    for nic in found or []:
        if not isinstance(nic, dict) or not nic.get("mac_address"):
            continue
        mac = macs.normalise(nic["mac_address"])
        if mac is None:
            notes.append(
                f"interfaces: {nic.get('name') or '?'} has no valid MAC address "
                f"({str(nic['mac_address'])[:40]!r})"
            )
            continue
        nics.append(
            {"ipv4_address": None, "has_carrier": None, **nic, "mac_address": mac}
        )
    return nics


def data(answer: dict[str, Any], bmc: str) -> dict[str, Any]:
    """Ironic's ``GET /v1/nodes/<node>/inventory`` answer as the data a
    sushy collection gives (:meth:`Collected.data`): the same inventory
    shape, provenance ``redfish`` per fact, the engine in ``redfish``."""
    inventory = dict(answer.get("inventory") or {})
    notes: list[str] = []
    cpu = inventory.get("cpu")
    if isinstance(cpu, dict):
        # Ironic writes count 0 and architecture '' when the BMC gave none
        cpu = {k: v for k, v in cpu.items() if v not in (0, "", None)}
        inventory["cpu"] = cpu
    if "interfaces" in inventory:
        inventory["interfaces"] = _interfaces(inventory["interfaces"], notes)
    for name, value in list(inventory.items()):
        if value in (None, [], {}):
            notes.append(f"{name}: not reported")
            del inventory[name]
    return {
        "inventory": inventory,
        provenance.PROVENANCE_KEY: {fact: provenance.REDFISH for fact in inventory},
        "redfish": {"bmc": bmc, "engine": ENGINE, "notes": notes},
    }
