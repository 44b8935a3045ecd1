"""LLDP TLVs as ironic-python-agent reports them, decoded (IEEE 802.1AB).

The ramdisk sends, per NIC, ``lldp``: a list of ``[type, "hex value"]``
pairs, raw as the switch sent them. :func:`parse` turns them into named
fields; a TLV that is malformed or unknown is skipped and counted, never
fatal: switches send all sorts of things.
"""

import ipaddress
from typing import Any

CHASSIS_ID = 1
PORT_ID = 2
PORT_DESCRIPTION = 4
SYSTEM_NAME = 5
SYSTEM_DESCRIPTION = 6
SYSTEM_CAPABILITIES = 7
MANAGEMENT_ADDRESS = 8
ORG_SPECIFIC = 127

IEEE_8021 = "0080c2"
IEEE_8023 = "00120f"

MAC_SUBTYPES = {"chassis": 4, "port": 3}
ADDRESS_SUBTYPES = {"chassis": 5, "port": 4}
CAPABILITIES = (
    "other",
    "repeater",
    "bridge",
    "wlan_access_point",
    "router",
    "telephone",
    "docsis_cable_device",
    "station_only",
    "c_vlan",
    "s_vlan",
    "two_port_mac_relay",
)


class _Bad(ValueError):
    """A TLV that does not have the shape its type says."""


def _mac(raw: bytes) -> str:
    if len(raw) != 6:
        raise _Bad("a MAC address has 6 bytes")
    return ":".join(f"{b:02x}" for b in raw)


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").strip("\x00").strip()


def _address(raw: bytes) -> str:
    """An IANA address-family-tagged address (1 = IPv4, 2 = IPv6)."""
    if not raw:
        raise _Bad("empty address")
    family, body = raw[0], raw[1:]
    if family == 1 and len(body) == 4 or family == 2 and len(body) == 16:
        return str(ipaddress.ip_address(body))
    raise _Bad(f"address family {family} with {len(body)} bytes")


def _identifier(kind: str, raw: bytes) -> str:
    if len(raw) < 2:
        raise _Bad(f"{kind} id too short")
    subtype, body = raw[0], raw[1:]
    if subtype == MAC_SUBTYPES[kind]:
        return _mac(body)
    if subtype == ADDRESS_SUBTYPES[kind]:
        return _address(body)
    return _text(body)


def _bits(value: int, names: tuple[str, ...]) -> list[str]:
    return [name for bit, name in enumerate(names) if value & (1 << bit)]


def _aggregation(body: bytes, out: dict[str, Any]) -> None:
    if len(body) != 5:
        raise _Bad("link aggregation has 5 bytes")
    out["switch_port_link_aggregation_support"] = bool(body[0] & 1)
    out["switch_port_link_aggregation_enabled"] = bool(body[0] & 2)
    out["switch_port_link_aggregation_id"] = int.from_bytes(body[1:], "big")


def _ieee_8021(subtype: int, body: bytes, out: dict[str, Any]) -> None:
    if subtype == 1:  # port VLAN id
        if len(body) != 2:
            raise _Bad("port VLAN id has 2 bytes")
        out["switch_port_untagged_vlan_id"] = int.from_bytes(body, "big")
    elif subtype == 2:  # port and protocol VLAN id
        if len(body) != 3:
            raise _Bad("protocol VLAN has 3 bytes")
        if body[0] & 2:  # enabled
            ids = out.setdefault("switch_port_protocol_vlan_ids", [])
            ids.append(int.from_bytes(body[1:], "big"))
    elif subtype == 3:  # VLAN name
        if len(body) < 3 or len(body) != 3 + body[2]:
            raise _Bad("VLAN name length does not match")
        vlans = out.setdefault("switch_port_vlans", [])
        vlans.append({"id": int.from_bytes(body[:2], "big"), "name": _text(body[3:])})
    elif subtype == 7:
        _aggregation(body, out)


def _ieee_8023(subtype: int, body: bytes, out: dict[str, Any]) -> None:
    if subtype == 1:  # MAC/PHY configuration
        if len(body) != 5:
            raise _Bad("MAC/PHY configuration has 5 bytes")
        out["switch_port_autonegotiation_support"] = bool(body[0] & 1)
        out["switch_port_autonegotiation_enabled"] = bool(body[0] & 2)
        out["switch_port_mau_type"] = int.from_bytes(body[3:], "big")
    elif subtype == 3:
        _aggregation(body, out)
    elif subtype == 4:  # maximum frame size
        if len(body) != 2:
            raise _Bad("maximum frame size has 2 bytes")
        out["switch_port_mtu"] = int.from_bytes(body, "big")


def _org_specific(raw: bytes, out: dict[str, Any]) -> None:
    if len(raw) < 4:
        raise _Bad("organisationally specific TLV too short")
    oui, subtype, body = raw[:3].hex(), raw[3], raw[4:]
    if oui == IEEE_8021:
        _ieee_8021(subtype, body, out)
    elif oui == IEEE_8023:
        _ieee_8023(subtype, body, out)


def _management(raw: bytes, out: dict[str, Any]) -> None:
    if len(raw) < 2 or raw[0] < 1 or len(raw) < 1 + raw[0]:
        raise _Bad("management address length does not match")
    address = _address(raw[1 : 1 + raw[0]])
    out.setdefault("switch_mgmt_addresses", []).append(address)


def _capabilities(raw: bytes, out: dict[str, Any]) -> None:
    if len(raw) != 4:
        raise _Bad("system capabilities have 4 bytes")
    out["switch_capabilities_support"] = _bits(
        int.from_bytes(raw[:2], "big"), CAPABILITIES
    )
    out["switch_capabilities_enabled"] = _bits(
        int.from_bytes(raw[2:], "big"), CAPABILITIES
    )


def _one(kind: int, raw: bytes, out: dict[str, Any]) -> None:
    if kind == CHASSIS_ID:
        out["switch_chassis_id"] = _identifier("chassis", raw)
    elif kind == PORT_ID:
        out["switch_port_id"] = _identifier("port", raw)
    elif kind == PORT_DESCRIPTION:
        out["switch_port_description"] = _text(raw)
    elif kind == SYSTEM_NAME:
        out["switch_system_name"] = _text(raw)
    elif kind == SYSTEM_DESCRIPTION:
        out["switch_system_description"] = _text(raw)
    elif kind == SYSTEM_CAPABILITIES:
        _capabilities(raw, out)
    elif kind == MANAGEMENT_ADDRESS:
        _management(raw, out)
    elif kind == ORG_SPECIFIC:
        _org_specific(raw, out)


def parse(tlvs: Any) -> tuple[dict[str, Any], int]:
    """(the named fields, how many TLVs were skipped as malformed)."""
    out: dict[str, Any] = {}
    skipped = 0
    if not isinstance(tlvs, list):
        return out, 0 if tlvs is None else 1
    for item in tlvs:
        try:
            if not isinstance(item, list | tuple) or len(item) != 2:
                raise _Bad("not a [type, value] pair")
            kind, value = int(item[0]), bytes.fromhex(str(item[1]))
            _one(kind, value, out)
        except (_Bad, ValueError, TypeError):
            skipped += 1
    return out, skipped
