from typing import Any

import pytest

from inspector import exceptions
from inspector.hooks import capabilities, pci_devices, pipeline
from inspector.hooks.base import NodeContext
from inspector.hooks.interfaces import ValidateInterfacesHook, boot_mac
from inspector.hooks.ramdisk_error import RamdiskErrorHook
from inspector.hooks.root_disk import GiB, RootDiskSelectionHook, matches
from inspector.hooks.scheduler import SchedulerHook


def patches(ctx: NodeContext) -> dict[str, Any]:
    return {p["path"]: p.get("value") for p in ctx.node_patches}


# ramdisk_error


def test_ramdisk_error(conf: Any, data: dict[str, Any]) -> None:
    RamdiskErrorHook(conf).before_processing(data)  # error is null: fine
    data["error"] = "boom"
    with pytest.raises(
        exceptions.ProcessingError, match="Ramdisk reported error: boom"
    ):
        RamdiskErrorHook(conf).before_processing(data)


# root_disk_selection


def test_root_disk_without_hints_keeps_ramdisk_choice(
    conf: Any, data: Any, ctx: NodeContext
) -> None:
    chosen = data["root_disk"]
    RootDiskSelectionHook(conf).before_update(data, ctx)
    assert data["root_disk"] == chosen


def test_root_disk_without_hints_or_choice_takes_smallest(
    conf: Any, data: Any, ctx: NodeContext
) -> None:
    del data["root_disk"]
    data["inventory"]["disks"].append({"name": "/dev/tiny", "size": 2 * GiB})
    RootDiskSelectionHook(conf).before_update(data, ctx)
    sizes = [d["size"] for d in data["inventory"]["disks"] if d["size"] >= 4 * GiB]
    assert data["root_disk"]["size"] == min(sizes)


def test_only_small_disks_is_a_diskless_node(
    conf: Any, data: Any, ctx: NodeContext
) -> None:
    """As ironic-inspector: with no disk of 4 GiB the ramdisk sends no
    root_disk, and the node is taken as diskless (local_gb 0), not failed."""
    del data["root_disk"]
    data["inventory"]["disks"] = [
        {"name": "/dev/sda", "size": 2 * GiB},
        {"name": "/dev/sdb", "size": 4 * GiB - 1},
    ]
    RootDiskSelectionHook(conf).before_update(data, ctx)
    assert "root_disk" not in data
    SchedulerHook(conf).before_update(data, ctx)
    assert data["local_gb"] == 0
    assert patches(ctx)["/properties/local_gb"] == 0


def test_only_small_disks_with_hints_is_an_error(
    conf: Any, data: Any, ctx: NodeContext
) -> None:
    del data["root_disk"]
    data["inventory"]["disks"] = [{"name": "/dev/sda", "size": 2 * GiB}]
    ctx.node["properties"] = {"root_device": {"name": "/dev/sda"}}
    with pytest.raises(exceptions.ProcessingError, match="No disks satisfied"):
        RootDiskSelectionHook(conf).before_update(data, ctx)


@pytest.mark.parametrize(
    "hints,name",
    [
        ({"name": "/dev/sdb"}, "/dev/sdb"),
        ({"size": ">= 1000"}, None),
        ({"rotational": True}, None),
        ({"model": "<in> PERC"}, "/dev/sda"),
        ({"name": "s== /dev/sda"}, "/dev/sda"),
        ({"name": "<or> /dev/nope <or> /dev/sda"}, "/dev/sda"),
    ],
)
def test_root_disk_hints(
    conf: Any, data: Any, ctx: NodeContext, hints: dict[str, Any], name: str | None
) -> None:
    ctx.node["properties"]["root_device"] = hints
    disks = data["inventory"]["disks"]
    expected = [d for d in disks if d["size"] >= 4 * GiB and matches(hints, d)]
    if not expected:
        with pytest.raises(exceptions.ProcessingError, match="No disks satisfied"):
            RootDiskSelectionHook(conf).before_update(data, ctx)
        return
    RootDiskSelectionHook(conf).before_update(data, ctx)
    assert data["root_disk"] == expected[0]
    if name:
        assert data["root_disk"]["name"] == name


def test_root_disk_bad_hints(conf: Any, data: Any, ctx: NodeContext) -> None:
    ctx.node["properties"]["root_device"] = {"colour": "blue"}
    with pytest.raises(exceptions.ProcessingError, match="Unknown root device hint"):
        RootDiskSelectionHook(conf).before_update(data, ctx)
    ctx.node["properties"]["root_device"] = {"size": "big"}
    with pytest.raises(exceptions.ProcessingError, match="Invalid root device hint"):
        RootDiskSelectionHook(conf).before_update(data, ctx)


def test_root_disk_no_disks(conf: Any, data: Any, ctx: NodeContext) -> None:
    data["inventory"]["disks"] = []
    RootDiskSelectionHook(conf).before_update(data, ctx)
    assert "root_disk" not in data
    ctx.node["properties"]["root_device"] = {"name": "/dev/sda"}
    with pytest.raises(exceptions.ProcessingError, match="No disks found"):
        RootDiskSelectionHook(conf).before_update(data, ctx)


# scheduler


def test_scheduler_sets_properties(conf: Any, data: Any, ctx: NodeContext) -> None:
    SchedulerHook(conf).before_update(data, ctx)
    expected_gb = data["root_disk"]["size"] // GiB - 1
    assert patches(ctx) == {
        "/properties/cpus": 80,
        "/properties/cpu_arch": "x86_64",
        "/properties/memory_mb": 393216,
        "/properties/local_gb": expected_gb,
    }
    assert data["local_gb"] == expected_gb


def test_scheduler_without_spacing(conf: Any, data: Any, ctx: NodeContext) -> None:
    conf.set_override("disk_partitioning_spacing", False, group="processing")
    SchedulerHook(conf).before_update(data, ctx)
    assert data["local_gb"] == data["root_disk"]["size"] // GiB


def test_scheduler_keeps_existing_without_overwrite(
    conf: Any, data: Any, ctx: NodeContext
) -> None:
    conf.set_override("overwrite_existing", False, group="processing")
    ctx.node["properties"] = {"cpus": 2, "memory_mb": 0}
    SchedulerHook(conf).before_update(data, ctx)
    assert "/properties/cpus" not in patches(ctx)
    assert patches(ctx)["/properties/memory_mb"] == 393216


def test_scheduler_missing_fields(conf: Any, data: Any, ctx: NodeContext) -> None:
    del data["inventory"]["cpu"]["count"]
    data["inventory"]["memory"] = {}
    with pytest.raises(exceptions.ProcessingError) as err:
        SchedulerHook(conf).before_update(data, ctx)
    assert "cpu.count" in str(err.value) and "memory.physical_mb" in str(err.value)


def test_scheduler_memory_from_total(conf: Any, data: Any, ctx: NodeContext) -> None:
    data["inventory"]["memory"] = {"total": 64 * GiB}
    SchedulerHook(conf).before_update(data, ctx)
    assert data["memory_mb"] == 64 * 1024


# validate_interfaces

PXE = "52:54:00:a0:00:00"


def test_boot_mac_forms(data: Any) -> None:
    assert boot_mac(data) == PXE
    data["boot_interface"] = "01-52-54-00-A0-00-00"
    assert boot_mac(data) == PXE
    data["boot_interface"] = None
    data["inventory"]["boot"]["pxe_interface"] = None
    assert boot_mac(data) is None


@pytest.mark.parametrize(
    "mode,expected",
    [
        ("pxe", {"eno1"}),
        ("active", {"eno1"}),
        ("all", {"eno1", "eno2", "eno3", "eno4"}),
        ("disabled", set()),
    ],
)
def test_add_ports(
    conf: Any, data: Any, ctx: NodeContext, mode: str, expected: set[str]
) -> None:
    conf.set_override("add_ports", mode, group="processing")
    hook = ValidateInterfacesHook(conf)
    hook.before_processing(data)
    assert set(data["interfaces"]) == expected
    assert len(data["all_interfaces"]) == 4
    hook.before_update(data, ctx)
    created = {p["address"]: p["pxe_enabled"] for p in ctx.ports_to_create}
    assert set(created) == {data["all_interfaces"][n]["mac"] for n in expected}
    assert all(enabled == (mac == PXE) for mac, enabled in created.items())


def test_pxe_falls_back_to_active_without_boot_interface(conf: Any, data: Any) -> None:
    data["boot_interface"] = None
    data["inventory"]["boot"]["pxe_interface"] = None
    ValidateInterfacesHook(conf).before_processing(data)
    assert set(data["interfaces"]) == {"eno1"}


def _existing(ctx: NodeContext, *macs: str, pxe: bool = True) -> None:
    for n, mac in enumerate(macs):
        ctx.ports[mac] = {"uuid": f"port-{n}", "address": mac, "pxe_enabled": pxe}


@pytest.mark.parametrize(
    "keep,deleted",
    [
        ("all", set()),
        ("present", {"port-1"}),
        ("added", {"port-1", "port-2"}),
    ],
)
def test_keep_ports(
    conf: Any, data: Any, ctx: NodeContext, keep: str, deleted: set[str]
) -> None:
    conf.set_override("keep_ports", keep, group="processing")
    _existing(ctx, PXE, "aa:aa:aa:aa:aa:aa", "52:54:01:a0:00:00")
    hook = ValidateInterfacesHook(conf)
    hook.before_processing(data)
    hook.before_update(data, ctx)
    assert set(ctx.ports_to_delete) == deleted
    assert ctx.ports_to_create == []


def test_update_pxe_enabled(conf: Any, data: Any, ctx: NodeContext) -> None:
    _existing(ctx, PXE, "52:54:01:a0:00:00")
    hook = ValidateInterfacesHook(conf)
    hook.before_processing(data)
    hook.before_update(data, ctx)
    assert ctx.port_patches == {
        "port-1": [{"op": "add", "path": "/pxe_enabled", "value": False}]
    }


def test_no_valid_interfaces(conf: Any, data: Any) -> None:
    for iface in data["inventory"]["interfaces"]:
        iface["mac_address"] = "garbage"
    with pytest.raises(exceptions.ProcessingError, match="No network interfaces"):
        ValidateInterfacesHook(conf).before_processing(data)


# capabilities and pci_devices


def test_capabilities_merge(conf: Any, data: Any, ctx: NodeContext) -> None:
    conf.set_override("boot_mode", True, group="capabilities")
    ctx.node["properties"]["capabilities"] = "profile:compute,boot_mode:bios"
    capabilities.CapabilitiesHook(conf).before_update(data, ctx)
    caps = capabilities.parse(patches(ctx)["/properties/capabilities"])
    assert caps["profile"] == "compute"
    assert caps["boot_mode"] == data["inventory"]["boot"]["current_boot_mode"]
    assert caps["cpu_vt"] == "true" and caps["cpu_aes"] == "true"
    assert caps["cpu_hugepages_1g"] == "true" and caps["cpu_txt"] == "true"


def test_capabilities_boot_mode_off_by_default(
    conf: Any, data: Any, ctx: NodeContext
) -> None:
    # as in ironic-inspector: Ironic deploys in the mode the capability names
    capabilities.CapabilitiesHook(conf).before_update(data, ctx)
    caps = capabilities.parse(patches(ctx)["/properties/capabilities"])
    assert "boot_mode" not in caps
    assert caps["cpu_vt"] == "true"


def test_capabilities_cpu_flags_map(conf: Any, data: Any, ctx: NodeContext) -> None:
    conf.set_override(
        "cpu_flags", {"aes": "has_aes", "nonexistent": "never"}, group="capabilities"
    )
    capabilities.CapabilitiesHook(conf).before_update(data, ctx)
    caps = capabilities.parse(patches(ctx)["/properties/capabilities"])
    assert caps == {"has_aes": "true"}


def test_capabilities_no_change_no_patch(
    conf: Any, data: Any, ctx: NodeContext
) -> None:
    data["inventory"]["cpu"]["flags"] = []
    data["inventory"]["boot"]["current_boot_mode"] = "uefi"
    ctx.node["properties"]["capabilities"] = "boot_mode:uefi"
    capabilities.CapabilitiesHook(conf).before_update(data, ctx)
    assert ctx.node_patches == []


def test_pci_aliases(conf: Any, data: Any, ctx: NodeContext) -> None:
    conf.set_override(
        "alias",
        ['{"vendor_id": "8086", "product_id": "1572", "name": "x710"}'],
        group="pci_devices",
    )
    data["pci_devices"] = [{"vendor_id": "8086", "product_id": "1572"}] * 2
    pci_devices.PciDevicesHook(conf).before_update(data, ctx)
    assert "x710:2" in patches(ctx)["/properties/capabilities"]


def test_pci_alias_invalid(conf: Any) -> None:
    conf.set_override("alias", ["{not json"], group="pci_devices")
    with pytest.raises(exceptions.ConfigError, match="pci_devices"):
        pci_devices.PciDevicesHook(conf)


# pipeline


def test_load_default_hooks(conf: Any) -> None:
    names = [h.name for h in pipeline.load_hooks(conf)]
    assert names == [
        "ramdisk_error",
        "root_disk_selection",
        "scheduler",
        "validate_interfaces",
        "capabilities",
        "pci_devices",
    ]


@pytest.mark.parametrize(
    "hooks,fragment",
    [
        ("scheduler,root_disk_selection", "needs root_disk_selection"),
        ("scheduler", "needs root_disk_selection"),
        ("ramdisk_error,nope", "unknown hooks: nope"),
        ("ramdisk_error,ramdisk_error", "more than once"),
    ],
)
def test_load_errors(conf: Any, hooks: str, fragment: str) -> None:
    conf.set_override("processing_hooks", hooks, group="processing")
    with pytest.raises(exceptions.ConfigError, match=fragment):
        pipeline.load_hooks(conf)


def test_unexpected_hook_error_is_processing_error(conf: Any, ctx: NodeContext) -> None:
    hooks = pipeline.load_hooks(conf)
    with pytest.raises(exceptions.ProcessingError) as err:
        pipeline.run_before_update(hooks, {"inventory": "nonsense"}, ctx)
    assert "Unexpected exception" in str(err.value)
