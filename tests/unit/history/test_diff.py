"""Changes between two hardware records: each case of the contract."""

import copy
from typing import Any

import pytest

from inspector.history import diff, record

MAC = "52:54:00:a0:00:00"
DISK = "0011000000abcdef"


@pytest.fixture
def before(data: dict[str, Any]) -> dict[str, Any]:
    return record.build(data)


def test_first_run_has_no_changes(before: dict[str, Any]) -> None:
    assert diff.changes(None, before) == []


def test_same_record_has_no_changes(before: dict[str, Any]) -> None:
    assert diff.changes(before, copy.deepcopy(before)) == []


def test_replaced_disk_is_one_removed_and_one_added(
    data: dict[str, Any], before: dict[str, Any]
) -> None:
    new = dict(data["inventory"]["disks"][0], serial="S3EVNX0K123456", wwn="0x9")
    data["inventory"]["disks"][0] = new
    found = diff.changes(before, record.build(data))
    assert [(c["component"], c["kind"], c["field"]) for c in found] == [
        (f"disk:{DISK}", "removed", None),
        ("disk:S3EVNX0K123456", "added", None),
    ]
    assert found[0]["before"] == before["disks"][DISK] and found[0]["after"] is None
    assert (
        found[1]["before"] is None and found[1]["after"]["serial"] == "S3EVNX0K123456"
    )
    assert diff.changed_components(found) == 2


def test_shrunk_memory_is_one_changed_total_mb(
    data: dict[str, Any], before: dict[str, Any]
) -> None:
    data["inventory"]["memory"]["physical_mb"] = 262144
    assert diff.changes(before, record.build(data)) == [
        {
            "component": "memory",
            "kind": "changed",
            "field": "total_mb",
            "before": 393216,
            "after": 262144,
        }
    ]


def test_moved_cable_is_a_changed_switch_port_id(
    data: dict[str, Any], before: dict[str, Any]
) -> None:
    data["all_interfaces"] = {
        "eno1": {
            "lldp_processed": {
                "switch_chassis_id": "88:5a:92:ec:54:59",
                "switch_system_name": "sw-tor-01",
                "switch_port_id": "Ethernet1/18",
            }
        }
    }
    assert diff.changes(before, record.build(data)) == [
        {
            "component": f"nic:{MAC}",
            "kind": "changed",
            "field": "switch_port_id",
            "before": "Ethernet1/17",
            "after": "Ethernet1/18",
        }
    ]


def test_one_change_per_attribute(data: dict[str, Any], before: dict[str, Any]) -> None:
    vendor = data["inventory"]["system_vendor"]
    vendor["firmware"]["version"] = "2.20.0"
    vendor["serial_number"] = "NEW"
    found = diff.changes(before, record.build(data))
    assert [(c["component"], c["field"]) for c in found] == [
        ("system", "bios_version"),
        ("system", "serial"),
    ]
    assert diff.changed_components(found) == 1


def test_removed_nic_and_added_dimm(
    data: dict[str, Any], before: dict[str, Any]
) -> None:
    data["inventory"]["interfaces"].pop()
    data["extra"] = {"memory": {"bank:0": {"slot": "A1", "serial": "D0"}}}
    found = diff.changes(before, record.build(data))
    assert [(c["component"], c["kind"]) for c in found] == [
        ("nic:52:54:03:a0:00:00", "removed"),
        ("dimm:D0", "added"),
    ]
    assert found[1]["after"]["slot"] == "A1"
