"""Required facts and the merge of a fallback run."""

from inspector.redfish import provenance

BMC = {
    "cpu": {"count": 8, "architecture": "x86_64"},
    "memory": {"physical_mb": 255 * 1024},
    "interfaces": [{"name": "nic0", "mac_address": "52:54:00:00:00:01"}],
    "system_vendor": {"serial_number": "S1"},
}
RAMDISK = {
    "cpu": {"count": 8, "architecture": "x86_64", "model_name": "X"},
    "memory": {"physical_mb": 256 * 1024},
    "disks": [{"name": "/dev/sda", "size": 500 * 1024**3}],
    "interfaces": [{"name": "eth0", "mac_address": "52:54:00:00:00:01"}],
}


def test_missing() -> None:
    assert provenance.missing(BMC, ["cpus", "memory_mb", "macs"]) == []
    assert provenance.missing(BMC, ["local_gb"]) == ["local_gb (no drives)"]
    assert provenance.missing({"cpu": {"count": 2}}, ["cpus"]) == [
        "cpus (no CPU architecture)"
    ]
    assert provenance.missing({}, ["memory_mb"]) == ["memory_mb (no memory size)"]


def test_merge_ramdisk_wins_and_disagreements_are_kept() -> None:
    merged, sources, disagreements = provenance.merge(BMC, RAMDISK)
    assert merged["memory"] == {"physical_mb": 256 * 1024}
    assert merged["system_vendor"] == {"serial_number": "S1"}
    assert sources == {
        "cpu": "ramdisk",
        "memory": "ramdisk",
        "interfaces": "ramdisk",
        "disks": "ramdisk",
        "system_vendor": "redfish",
    }
    assert disagreements == [
        {"fact": "memory", "redfish": 255 * 1024, "ramdisk": 256 * 1024}
    ]
