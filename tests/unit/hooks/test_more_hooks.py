"""extra_hardware, raid_device, physnet_cidr_map, accelerators and
numa_topology, on good and malformed ramdisk data."""

import json
import pathlib
from typing import Any

import pytest

from inspector import exceptions
from inspector.hooks.accelerators import AcceleratorsHook
from inspector.hooks.base import NodeContext
from inspector.hooks.extra_hardware import ExtraHardwareHook
from inspector.hooks.interfaces import ValidateInterfacesHook
from inspector.hooks.numa import NumaTopologyHook
from inspector.hooks.physnet import PhysnetCidrMapHook
from inspector.hooks.raid_device import RaidDeviceHook


def patches(ctx: NodeContext) -> dict[str, Any]:
    return {p["path"]: p.get("value") for p in ctx.node_patches}


# extra_hardware


def test_extra_hardware_nests_and_types(conf: Any) -> None:
    data: dict[str, Any] = {
        "data": [
            ["cpu", "logical", "number", "16"],
            ["cpu", "physical_0", "frequency", "2.5"],
            ["disk", "sda", "vendor", "ATA"],
            ["bad"],
            [1, 2, 3, 4],
            ["cpu", "logical", "flags", None],
        ]
    }
    ExtraHardwareHook(conf).before_processing(data)
    assert "data" not in data
    # integers as ironic-inspector converts them; other strings kept
    assert data["extra"] == {
        "cpu": {
            "logical": {"number": 16, "flags": None},
            "physical_0": {"frequency": "2.5"},
        },
        "disk": {"sda": {"vendor": "ATA"}},
    }


@pytest.mark.parametrize(
    "raw", [None, "text", {"a": 1}, 5, [["a", "b", "c", "d"], "x"]]
)
def test_extra_hardware_unrecognised_is_kept(conf: Any, raw: Any) -> None:
    data: dict[str, Any] = {"data": raw}
    ExtraHardwareHook(conf).before_processing(data)
    assert data == {"data": raw}  # not converted, left as upstream leaves it


@pytest.mark.parametrize(
    "raw",
    [None, "text", [["a", "b", "c", "d"], ["short"]], [["a", "b", "c", "d", "e"]]],
)
def test_extra_hardware_strict_refuses_and_removes(conf: Any, raw: Any) -> None:
    conf.set_override("strict", True, group="extra_hardware")
    data: dict[str, Any] = {"data": raw}
    ExtraHardwareHook(conf).before_processing(data)
    assert data == {}


def test_extra_hardware_strict_converts_a_clean_list(conf: Any) -> None:
    conf.set_override("strict", True, group="extra_hardware")
    data: dict[str, Any] = {"data": [["memory", "total", "size", "4096"]]}
    ExtraHardwareHook(conf).before_processing(data)
    assert data == {"extra": {"memory": {"total": {"size": 4096}}}}


def test_extra_hardware_absent(conf: Any) -> None:
    data: dict[str, Any] = {"inventory": {}}
    ExtraHardwareHook(conf).before_processing(data)
    assert data == {"inventory": {}}


# raid_device


def _disks(*disks: dict[str, Any]) -> dict[str, Any]:
    return {"inventory": {"disks": list(disks)}}


def test_raid_device_records_then_finds_the_new_volume(conf: Any) -> None:
    hook = RaidDeviceHook(conf)
    first = NodeContext(uuid="n", node={"extra": {}}, ports={})
    hook.before_update(
        _disks(
            {"name": "/dev/sda", "serial": "A"}, {"name": "/dev/sdb", "serial": "B"}
        ),
        first,
    )
    assert patches(first) == {"/extra/block_devices": {"serials": ["A", "B"]}}
    second = NodeContext(
        uuid="n", node={"extra": {"block_devices": {"serials": ["A", "B"]}}}, ports={}
    )
    hook.before_update(
        _disks(
            {"name": "/dev/sda", "serial": "A"},
            {"name": "/dev/sdb", "serial": "B"},
            {"name": "/dev/md0", "serial": "RAID1"},
        ),
        second,
    )
    assert second.node_patches == [
        {"op": "add", "path": "/properties/root_device", "value": {"serial": "RAID1"}},
        {"op": "remove", "path": "/extra/block_devices"},
    ]


def test_raid_device_uses_the_name_without_a_serial(conf: Any) -> None:
    ctx = NodeContext(
        uuid="n", node={"extra": {"block_devices": {"serials": ["A"]}}}, ports={}
    )
    RaidDeviceHook(conf).before_update(
        _disks({"name": "/dev/sda", "serial": "A"}, {"name": "/dev/md127"}), ctx
    )
    assert patches(ctx)["/properties/root_device"] == {"name": "/dev/md127"}


@pytest.mark.parametrize(
    "disks",
    [
        [{"serial": "A"}],  # nothing new
        [{"serial": "A"}, {"serial": "X"}, {"serial": "Y"}],  # two new ones
    ],
)
def test_raid_device_ambiguous_leaves_the_node(conf: Any, disks: Any) -> None:
    ctx = NodeContext(
        uuid="n", node={"extra": {"block_devices": {"serials": ["A"]}}}, ports={}
    )
    RaidDeviceHook(conf).before_update(_disks(*disks), ctx)
    assert ctx.node_patches == []


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"inventory": None},
        {"inventory": {"disks": 5}},
        {"inventory": {"disks": [None, "x", {"serial": 7}]}},
    ],
)
def test_raid_device_malformed_disks(conf: Any, data: Any) -> None:
    ctx = NodeContext(uuid="n", node={}, ports={})
    RaidDeviceHook(conf).before_update(data, ctx)
    assert patches(ctx) == {"/extra/block_devices": {"serials": []}}


# physnet_cidr_map


def _physnet_hook(conf: Any, entries: list[str]) -> PhysnetCidrMapHook:
    conf.set_override("cidr_map", entries, group="port_physnet")
    return PhysnetCidrMapHook(conf)


def test_physnet_most_specific_cidr_wins(conf: Any, data: Any) -> None:
    ValidateInterfacesHook(conf).before_processing(data)
    name, iface = next((n, i) for n, i in data["all_interfaces"].items() if i["ip"])
    hook = _physnet_hook(
        conf, ["0.0.0.0/0:wide", f"{iface['ip']}/32:narrow", "2001:db8::/64:v6"]
    )
    new = NodeContext(uuid="n", node={}, ports={})
    new.ports_to_create.append({"address": iface["mac"], "pxe_enabled": True})
    hook.before_update(data, new)
    assert new.ports_to_create[0]["physical_network"] == "narrow"
    old = NodeContext(uuid="n", node={}, ports={iface["mac"]: {"uuid": "p1"}})
    hook.before_update(data, old)
    assert old.port_patches["p1"] == [
        {"op": "add", "path": "/physical_network", "value": "narrow"}
    ]
    same = NodeContext(
        uuid="n",
        node={},
        ports={iface["mac"]: {"uuid": "p1", "physical_network": "narrow"}},
    )
    hook.before_update(data, same)
    assert same.port_patches == {}


def test_physnet_no_match_no_change(conf: Any, data: Any) -> None:
    ValidateInterfacesHook(conf).before_processing(data)
    hook = _physnet_hook(conf, ["203.0.113.0/24:far"])
    ctx = NodeContext(uuid="n", node={}, ports={})
    hook.before_update(data, ctx)
    assert ctx.port_patches == {} and ctx.ports_to_create == []


@pytest.mark.parametrize("entry", ["10.0.0.0/33:x", "nonsense", "10.0.0.0/8:", ":p"])
def test_physnet_bad_map_names_the_entry(conf: Any, entry: str) -> None:
    with pytest.raises(exceptions.ConfigError, match=r"\[port_physnet\]cidr_map"):
        _physnet_hook(conf, [entry])


# accelerators


def test_accelerators_known_devices(conf: Any) -> None:
    data: dict[str, Any] = {
        "pci_devices": [
            {"vendor_id": "10de", "product_id": "20B0", "bus": "0000:81:00.0"},
            {"vendor_id": "0x10de", "product_id": "0x20b0", "bus": "0000:82:00.0"},
            {"vendor_id": "8086", "product_id": "1572", "bus": "0000:18:00.0"},  # a NIC
            {"vendor_id": None},
            "garbage",
            {"vendor_id": "10de", "product_id": 7},
        ]
    }
    ctx = NodeContext(uuid="n", node={}, ports={})
    AcceleratorsHook(conf).before_update(data, ctx)
    assert [d["pci_address"] for d in data["accel_devices"]] == [
        "0000:81:00.0",
        "0000:82:00.0",
    ]
    assert data["accel_devices"][0]["device_info"] == "NVIDIA A100"
    assert patches(ctx) == {"/properties/accel_count": 2}


@pytest.mark.parametrize("devices", [None, [], "x", [{"vendor_id": "8086"}]])
def test_accelerators_none_found(conf: Any, devices: Any) -> None:
    data: dict[str, Any] = {"pci_devices": devices}
    ctx = NodeContext(uuid="n", node={}, ports={})
    AcceleratorsHook(conf).before_update(data, ctx)
    assert data["accel_devices"] == [] and ctx.node_patches == []


def test_accelerators_lab_gpus_are_known(conf: Any) -> None:
    from lab.machines.hardware import GPUS

    known = AcceleratorsHook(conf).known
    assert all((v, p) in known for v, p, _name in GPUS)


def test_accelerators_file(conf: Any, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "known.json"
    path.write_text(
        json.dumps(
            {
                "pci_devices": [
                    {
                        "vendor_id": "abcd",
                        "device_id": "0001",
                        "type": "FPGA",
                        "device_info": "Lab FPGA",
                    }
                ]
            }
        )
    )
    conf.set_override("known_devices", str(path), group="accelerators")
    hook = AcceleratorsHook(conf)
    assert hook.known == {("abcd", "0001"): ("FPGA", "Lab FPGA")}
    for bad in (
        "{",
        json.dumps({"other": []}),
        json.dumps({"pci_devices": [{"vendor_id": "xyz"}]}),
    ):
        path.write_text(bad)
        with pytest.raises(exceptions.ConfigError, match="known_devices"):
            AcceleratorsHook(conf)
    # ironic-inspector's file is YAML
    path.write_text(
        'pci_devices:\n  - vendor_id: "10de"\n    device_id: "1eb8"\n'
        "    type: GPU\n    device_info: NVIDIA Corporation Tesla T4\n"
    )
    assert AcceleratorsHook(conf).known == {
        ("10de", "1eb8"): ("GPU", "NVIDIA Corporation Tesla T4")
    }
    conf.set_override(
        "known_devices", str(tmp_path / "missing.json"), group="accelerators"
    )
    with pytest.raises(exceptions.ConfigError, match="missing.json"):
        AcceleratorsHook(conf)


# numa_topology


def test_numa_topology(conf: Any) -> None:
    data: dict[str, Any] = {
        "inventory": {
            "interfaces": [{"name": "eno1", "mac_address": "AA:BB:CC:00:00:01"}]
        },
        "numa_topology": {
            "ram": [
                {"numa_node": 0, "size_kb": 2097152},
                {"numa_node": 1, "size_kb": 1024},
                {"numa_node": "x", "size_kb": 1},
            ],
            "cpus": [
                {"cpu": 2, "numa_node": 0, "thread_siblings": [2, 34]},
                {"cpu": 0, "numa_node": 0, "thread_siblings": [0, 32]},
                {"cpu": 1, "numa_node": 1},
                {"cpu": -1, "numa_node": 1},
            ],
            "nics": [
                {"name": "eno1", "numa_node": 0},
                {"name": "eno9", "numa_node": 1},
                {"numa_node": 1},
            ],
        },
    }
    hook = NumaTopologyHook(conf)
    hook.before_processing(data)
    assert data["numa_nodes"] == [
        {
            "numa_node": 0,
            "memory_mb": 2048,
            "cpus": [0, 2],
            "thread_siblings": [[0, 32], [2, 34]],
            "nics": [{"name": "eno1", "mac": "aa:bb:cc:00:00:01"}],
        },
        {
            "numa_node": 1,
            "memory_mb": 1,
            "cpus": [1],
            "thread_siblings": [],
            "nics": [{"name": "eno9", "mac": None}],
        },
    ]
    ctx = NodeContext(uuid="n", node={"properties": {}}, ports={})
    hook.before_update(data, ctx)
    assert patches(ctx) == {"/properties/numa_nodes": 2}


@pytest.mark.parametrize(
    "topology", [None, "x", [], {"ram": "x"}, {"cpus": [None]}, {"nics": [5]}]
)
def test_numa_topology_malformed(conf: Any, topology: Any) -> None:
    data: dict[str, Any] = {"numa_topology": topology}
    hook = NumaTopologyHook(conf)
    hook.before_processing(data)
    assert data["numa_nodes"] == []
    ctx = NodeContext(uuid="n", node={"properties": {}}, ports={})
    hook.before_update(data, ctx)
    assert ctx.node_patches == []


def test_numa_keeps_existing_without_overwrite(conf: Any) -> None:
    conf.set_override("overwrite_existing", False, group="processing")
    data: dict[str, Any] = {"numa_nodes": [{"numa_node": 0}]}
    ctx = NodeContext(uuid="n", node={"properties": {"numa_nodes": 4}}, ports={})
    NumaTopologyHook(conf).before_update(data, ctx)
    assert ctx.node_patches == []
