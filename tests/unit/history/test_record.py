"""The hardware record, facts and links of processed ramdisk data."""

import copy
import json
from typing import Any

from inspector.history import record
from inspector.hooks.root_disk import GiB

MAC = "52:54:00:a0:00:00"


def _processed(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as the default hooks leave it (the parts the record reads)."""
    data["local_gb"] = data["root_disk"]["size"] // GiB - 1
    data["memory_mb"] = data["inventory"]["memory"]["physical_mb"]
    return data


def test_record_of_the_lab_payload(data: dict[str, Any]) -> None:
    built = record.build(_processed(data))
    assert built["system"] == {
        "vendor": "Dell Inc.",
        "product": "PowerEdge R640 (SKU=NotProvided;ModelName=PowerEdge R640)",
        "serial": "CN700000XYZ",
        "bios_version": "2.19.1",
    }
    assert built["cpu"] == {
        "model": "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz",
        "count": 80,
        "architecture": "x86_64",
    }
    assert built["memory"] == {"total_mb": 393216}
    assert built["dimms"] == {}  # no extra-hardware data
    assert built["disks"]["0011000000abcdef"] == {
        "name": "/dev/sda",
        "size": 479559942144,
        "model": "PERC H730P Mini",
        "serial": "0011000000abcdef",
        "wwn": "0x61866da0b3a3e1002ab60000",
    }
    nic = built["nics"][MAC]
    assert nic["name"] == "eno1"
    assert nic["pci_address"] == "0000:19:00.0"
    assert nic["speed_mbps"] == 10000
    # decoded from the raw TLVs: lldp_basic did not run
    assert nic["switch_chassis_id"] == "88:5a:92:ec:54:59"
    assert nic["switch_port_id"] == "Ethernet1/17"
    assert nic["switch_system_name"] == "sw-tor-01"
    assert built["bmc"] == {"ipv4": "192.0.2.1", "ipv6": None}  # "::/0": none
    assert len(json.dumps(built, sort_keys=True)) < 4096


def test_memory_is_what_ironic_gets(data: dict[str, Any]) -> None:
    data["inventory"]["memory"] = {"total": 8 * 1024**3}
    data["memory_mb"] = 8192  # the scheduler hook's fallback on the total
    assert record.build(data)["memory"] == {"total_mb": 8192}


def test_disk_identity_is_serial_else_wwn_else_name() -> None:
    disks = [
        {"name": "/dev/sda", "serial": "S1", "wwn": "0x1", "size": 1},
        {"name": "/dev/sdb", "serial": None, "wwn": "0x2", "size": 2},
        {"name": "/dev/sdc", "serial": "", "size": 3},
    ]
    built = record.build({"inventory": {"disks": disks}})
    assert sorted(built["disks"]) == ["/dev/sdc", "0x2", "S1"]


def test_dimms_by_serial_else_slot() -> None:
    extra = {
        "memory": {
            "total": {"size": 68719476736},
            "bank:0": {"slot": "A1", "size": 34359738368, "serial": "D0"},
            "bank:1": {"slot": "A2", "size": 34359738368},
        }
    }
    built = record.build({"extra": extra})
    assert sorted(built["dimms"]) == ["A2", "D0"]
    assert built["dimms"]["D0"]["size"] == "34359738368"


def test_lldp_of_the_lldp_basic_hook_is_read(data: dict[str, Any]) -> None:
    data["all_interfaces"] = {
        "eno1": {
            "mac": MAC,
            "lldp_processed": {
                "switch_chassis_id": "aa:bb:cc:dd:ee:ff",
                "switch_port_id": "Ethernet9",
                "switch_system_name": "sw-2",
                "switch_port_vlans": [{"id": 30, "name": "c"}, {"id": 10, "name": "a"}],
            },
        }
    }
    nic = record.build(data)["nics"][MAC]
    assert nic["switch_port_id"] == "Ethernet9"
    assert nic["vlans"] == [10, 30]


def test_size_is_bounded() -> None:
    """A ramdisk that reports too much: the caps keep the record small and
    the same identities every time."""
    interfaces = [
        {
            "name": "x" * 1000,
            "mac_address": f"52:54:00:00:{i // 256:02x}:{i % 256:02x}",
        }
        for i in range(500)
    ]
    disks = [{"name": f"/dev/sd{i}", "serial": f"S{i:04}"} for i in range(500)]
    vlans = [{"id": i, "name": ""} for i in range(4000)]
    data = {
        "inventory": {"interfaces": interfaces, "disks": disks},
        "all_interfaces": {
            "x" * 1000: {"lldp_processed": {"switch_port_vlans": vlans}}
        },
    }
    built = record.build(data)
    assert len(built["nics"]) == record.MAX_NICS
    assert len(built["disks"]) == record.MAX_DISKS
    assert sorted(built["disks"])[0] == "S0000"
    nic = built["nics"]["52:54:00:00:00:00"]
    assert len(nic["name"]) == record.MAX_TEXT
    assert nic["vlans"] == list(range(record.MAX_VLANS))
    assert len(json.dumps(built)) < 64 * 1024


def test_facts(data: dict[str, Any]) -> None:
    summary = record.summarise(_processed(data))
    assert summary.facts == {
        "cpus": 80,
        "cpu_model": "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz",
        "cpu_arch": "x86_64",
        "memory_mb": 393216,
        "local_gb": 445,  # the scheduler hook's value (spacing on)
        "disks": len(data["inventory"]["disks"]),
        "nics": len(data["inventory"]["interfaces"]),
        "vendor": "Dell Inc.",
        "product": "PowerEdge R640 (SKU=NotProvided;ModelName=PowerEdge R640)",
        "serial": "CN700000XYZ",
        "bios_version": "2.19.1",
    }


def test_local_gb_without_the_scheduler_hook(data: dict[str, Any]) -> None:
    assert record.summarise(data).facts["local_gb"] == 446


def test_links(data: dict[str, Any]) -> None:
    summary = record.summarise(data)
    assert len(summary.links) == len(data["inventory"]["interfaces"])
    first = summary.links[0]
    assert first == {
        "mac": MAC,
        "name": "eno1",
        "pxe": True,
        "switch_id": "88:5a:92:ec:54:59",
        "switch_name": "sw-tor-01",
        "port_id": "Ethernet1/17",
    }
    assert [link["pxe"] for link in summary.links].count(True) == 1


def test_garbage_is_no_crash() -> None:
    for data in ({}, {"inventory": None}, {"inventory": {"disks": "x", "cpu": 1}}):
        summary = record.summarise(copy.deepcopy(data))
        assert summary.facts["disks"] == 0
