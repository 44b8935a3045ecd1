"""[redfish]engine = ironic: the start's refusals and Ironic's inventory
as our data (pure)."""

from typing import Any

import pytest

from inspector.redfish import ironic_engine

UUID = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"


def _node(**fields: Any) -> dict[str, Any]:
    node = {
        "uuid": UUID,
        "inspect_interface": "redfish",
        "provision_state": "manageable",
        "driver_info": {"redfish_address": "https://10.0.0.9"},
    }
    node.update(fields)
    return node


@pytest.mark.parametrize("state", ["manageable", "inspect failed"])
def test_a_node_ironic_can_inspect(state: str) -> None:
    assert ironic_engine.refusal(_node(provision_state=state)) is None


def test_the_inspect_interface_must_be_redfish() -> None:
    problem = ironic_engine.refusal(_node(inspect_interface="agent"))
    assert problem is not None
    assert "inspect_interface 'agent'" in problem
    assert f"baremetal node set --inspect-interface redfish {UUID}" in problem


@pytest.mark.parametrize("state", ["enroll", "active", "inspecting", "available"])
def test_the_provision_state_must_allow_inspect(state: str) -> None:
    problem = ironic_engine.refusal(_node(provision_state=state))
    assert problem is not None
    assert repr(state) in problem and f"baremetal node manage {UUID}" in problem


def test_ironic_inventory_as_our_data() -> None:
    answer = {
        "inventory": {
            "cpu": {"count": 0, "architecture": ""},
            "memory": {"physical_mb": 8192},
            "interfaces": [
                {"name": "1", "mac_address": "52:54:00:00:00:01", "speed_mbps": 1000},
                {"name": "2"},
            ],
            "disks": [],
        },
        "plugin_data": {},
    }
    data = ironic_engine.data(answer, "BMC x")
    inventory = data["inventory"]
    # Ironic's 0 and '' for what the BMC did not give are no facts
    assert "cpu" not in inventory and "disks" not in inventory
    assert inventory["interfaces"] == [
        {
            "name": "1",
            "mac_address": "52:54:00:00:00:01",
            "speed_mbps": 1000,
            "ipv4_address": None,
            "has_carrier": None,
        }
    ]
    assert data["provenance"] == {"memory": "redfish", "interfaces": "redfish"}
    assert data["redfish"]["engine"] == "ironic"
    assert data["redfish"]["bmc"] == "BMC x"
    assert sorted(data["redfish"]["notes"]) == [
        "cpu: not reported",
        "disks: not reported",
    ]


def test_macs_as_ironic_stores_its_ports() -> None:
    answer = {
        "inventory": {
            "interfaces": [
                {"name": "1", "mac_address": "52:54:00:AB:CD:EF"},
                {"name": "2", "mac_address": "not-a-mac"},
            ]
        }
    }
    data = ironic_engine.data(answer, "BMC x")
    assert [n["mac_address"] for n in data["inventory"]["interfaces"]] == [
        "52:54:00:ab:cd:ef"
    ]
    assert data["redfish"]["notes"] == [
        "interfaces: 2 has no valid MAC address ('not-a-mac')"
    ]


def test_describe_names_the_bmc_and_the_node() -> None:
    text = ironic_engine.describe(_node())
    assert "https://10.0.0.9" in text and UUID in text
