"""LLDP decoding and the lldp_basic / local_link_connection hooks."""

from typing import Any

import pytest

from inspector.hooks import lldp
from inspector.hooks.base import NodeContext
from inspector.hooks.interfaces import ValidateInterfacesHook
from inspector.hooks.lldp_hooks import LldpBasicHook, LocalLinkConnectionHook
from lab.machines import lldp as lab_lldp


def _hex(text: str) -> str:
    return text.encode().hex()


SWITCH = [
    [1, "04885a92010203"],  # chassis: MAC
    [2, "05" + _hex("Ethernet1/7")],  # port: interface name
    [3, "0078"],  # TTL
    [4, _hex("uplink to rack 7")],
    [5, _hex("leaf-7a")],
    [6, _hex("Arista EOS 4.30")],
    [7, "00140014"],  # bridge + router, both enabled
    [8, "05" + "01" + "c0000201" + "020000000100"],  # management 192.0.2.1
    [127, "0080c2" + "01" + "0064"],  # port VLAN 100
    [127, "0080c2" + "03" + "0065" + "05" + _hex("store")],  # VLAN 101 "store"
    [127, "0080c2" + "03" + "0066" + "04" + _hex("mgmt")],
    [127, "0080c2" + "07" + "03" + "00000010"],  # aggregation capable+enabled, id 16
    [127, "00120f" + "01" + "03" + "6c01" + "0010"],  # autoneg on, MAU 16
    [127, "00120f" + "04" + "2400"],  # MTU 9216
    [127, "00000c" + "01" + "ff"],  # another vendor: ignored
    [0, ""],  # end of LLDPDU
]


def test_parse_every_field() -> None:
    fields, skipped = lldp.parse(SWITCH)
    assert skipped == 0
    assert fields == {
        "switch_chassis_id": "88:5a:92:01:02:03",
        "switch_port_id": "Ethernet1/7",
        "switch_port_description": "uplink to rack 7",
        "switch_system_name": "leaf-7a",
        "switch_system_description": "Arista EOS 4.30",
        "switch_capabilities_support": ["bridge", "router"],
        "switch_capabilities_enabled": ["bridge", "router"],
        "switch_mgmt_addresses": ["192.0.2.1"],
        "switch_port_untagged_vlan_id": 100,
        "switch_port_vlans": [
            {"id": 101, "name": "store"},
            {"id": 102, "name": "mgmt"},
        ],
        "switch_port_link_aggregation_support": True,
        "switch_port_link_aggregation_enabled": True,
        "switch_port_link_aggregation_id": 16,
        "switch_port_autonegotiation_support": True,
        "switch_port_autonegotiation_enabled": True,
        "switch_port_mau_type": 16,
        "switch_port_mtu": 9216,
    }


@pytest.mark.parametrize(
    "tlvs,skipped",
    [
        (None, 0),
        ("garbage", 1),
        ([[1, "zz"]], 1),  # not hex
        ([[1, "04aabb"]], 1),  # MAC too short
        (["1:04aabbccddeeff"], 1),  # not a pair
        ([[1]], 1),
        ([["one", "00"]], 1),  # type not a number
        ([[127, "0080c2"]], 1),  # no subtype
        ([[127, "0080c2" + "01" + "00"]], 1),  # VLAN id of one byte
        ([[127, "0080c2" + "03" + "0065" + "09" + "61"]], 1),  # name length lies
        ([[8, "09"]], 1),  # management address cut short
        ([[1, "05" + "03" + "0102"]], 1),  # unknown address family
    ],
)
def test_malformed_tlvs_are_skipped(tlvs: Any, skipped: int) -> None:
    fields, count = lldp.parse(tlvs)
    assert count == skipped
    assert fields == {}


def test_good_tlvs_survive_bad_neighbours() -> None:
    fields, skipped = lldp.parse([[1, "04aa"], [5, _hex("leaf")], [2, "zz"]])
    assert (fields, skipped) == ({"switch_system_name": "leaf"}, 2)


def test_chassis_and_port_subtypes() -> None:
    fields, _ = lldp.parse(
        [
            [1, "05" + "01" + "0a000001"],  # IPv4 address
            [2, "03" + "aabbccddeeff"],
        ]
    )  # port MAC
    assert fields == {
        "switch_chassis_id": "10.0.0.1",
        "switch_port_id": "aa:bb:cc:dd:ee:ff",
    }


def test_lab_encoder_round_trips() -> None:
    tlvs = lab_lldp.encode(
        "88:5a:92:00:00:01", "Ethernet1/3", "spine", vlan=7, mtu=1500
    )
    fields, skipped = lldp.parse(tlvs)
    assert skipped == 0
    assert fields["switch_port_untagged_vlan_id"] == 7
    assert fields["switch_port_mtu"] == 1500
    assert lab_lldp.decode(tlvs) == {k: fields[k] for k in lab_lldp.decode(tlvs)}


def _data(data: dict[str, Any], conf: Any) -> dict[str, Any]:
    first = data["inventory"]["interfaces"][0]
    first["lldp"] = SWITCH
    ValidateInterfacesHook(conf).before_processing(data)
    return data


def test_lldp_basic_writes_the_data_only(
    conf: Any, data: Any, ctx: NodeContext
) -> None:
    data = _data(data, conf)
    name = data["inventory"]["interfaces"][0]["name"]
    LldpBasicHook(conf).before_update(data, ctx)
    processed = data["all_interfaces"][name]["lldp_processed"]
    assert processed["switch_system_name"] == "leaf-7a"
    assert ctx.node_patches == [] and ctx.port_patches == {}


def test_local_link_connection_on_new_and_existing_ports(conf: Any, data: Any) -> None:
    data = _data(data, conf)
    mac = data["all_interfaces"][data["inventory"]["interfaces"][0]["name"]]["mac"]
    expected = {
        "switch_id": "88:5a:92:01:02:03",
        "port_id": "Ethernet1/7",
        "switch_info": "leaf-7a",
    }
    new = NodeContext(uuid="n", node={}, ports={})
    new.ports_to_create.append({"address": mac, "pxe_enabled": True})
    LocalLinkConnectionHook(conf).before_update(data, new)
    assert new.ports_to_create[0]["local_link_connection"] == expected
    old = NodeContext(uuid="n", node={}, ports={mac: {"uuid": "p1"}})
    LocalLinkConnectionHook(conf).before_update(data, old)
    assert old.port_patches == {
        "p1": [{"op": "add", "path": "/local_link_connection", "value": expected}]
    }
    same = NodeContext(
        uuid="n",
        node={},
        ports={mac: {"uuid": "p1", "local_link_connection": expected}},
    )
    LocalLinkConnectionHook(conf).before_update(data, same)
    assert same.port_patches == {}  # already right: no write


def test_local_link_connection_needs_a_switch_mac(conf: Any, data: Any) -> None:
    data["inventory"]["interfaces"][0]["lldp"] = [
        [1, "07" + _hex("chassis-7")],
        [2, "05" + _hex("Eth1")],
    ]
    ValidateInterfacesHook(conf).before_processing(data)
    mac = data["all_interfaces"][data["inventory"]["interfaces"][0]["name"]]["mac"]
    ctx = NodeContext(uuid="n", node={}, ports={mac: {"uuid": "p1"}})
    LocalLinkConnectionHook(conf).before_update(data, ctx)
    assert ctx.port_patches == {}
