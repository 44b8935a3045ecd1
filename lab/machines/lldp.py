"""LLDP TLVs as ironic-python-agent reports them: [type, hex value] pairs."""

CHASSIS_ID = 1
PORT_ID = 2
TTL = 3
SYSTEM_NAME = 5
ORG_SPECIFIC = 127
IEEE_8021_OUI = "0080c2"
IEEE_8023_OUI = "00120f"


def encode(
    chassis_mac: str,
    port_id: str,
    system_name: str,
    vlan: int | None = None,
    mtu: int | None = None,
) -> list[list[object]]:
    """TLVs a switch port would send: chassis (MAC subtype 4), port (interface
    name subtype 5), TTL, system name, optional port VLAN and maximum frame."""
    tlvs: list[list[object]] = [
        [CHASSIS_ID, "04" + chassis_mac.replace(":", "")],
        [PORT_ID, "05" + port_id.encode().hex()],
        [TTL, "0078"],
        [SYSTEM_NAME, system_name.encode().hex()],
    ]
    if vlan is not None:
        tlvs.append([ORG_SPECIFIC, IEEE_8021_OUI + "01" + f"{vlan:04x}"])
    if mtu is not None:
        tlvs.append([ORG_SPECIFIC, IEEE_8023_OUI + "04" + f"{mtu:04x}"])
    return tlvs


def decode(tlvs: list[list[object]] | None) -> dict[str, object]:
    """The fields :func:`encode` writes, read back (unknown TLVs skipped)."""
    result: dict[str, object] = {}
    for item in tlvs or []:
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            continue
        kind, value = item
        try:
            raw = bytes.fromhex(str(value))
        except ValueError:
            continue
        if kind == CHASSIS_ID and raw[:1] == b"\x04" and len(raw) == 7:
            result["switch_chassis_id"] = ":".join(f"{b:02x}" for b in raw[1:])
        elif kind == PORT_ID and len(raw) > 1:
            result["switch_port_id"] = raw[1:].decode(errors="replace")
        elif kind == SYSTEM_NAME:
            result["switch_system_name"] = raw.decode(errors="replace")
        elif kind == ORG_SPECIFIC and len(raw) >= 4:
            oui, subtype, body = raw[:3].hex(), raw[3], raw[4:]
            if oui == IEEE_8021_OUI and subtype == 1 and len(body) == 2:
                result["switch_port_untagged_vlan_id"] = int.from_bytes(body, "big")
            elif oui == IEEE_8023_OUI and subtype == 4 and len(body) == 2:
                result["switch_port_mtu"] = int.from_bytes(body, "big")
    return result
