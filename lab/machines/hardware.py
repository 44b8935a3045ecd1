"""Virtual machines with varied, realistic hardware and their IPA payloads."""

import base64
import dataclasses
import random
from typing import Any

from lab.machines import lldp

GiB = 1024**3

CPUS = [
    # model, architecture, cores per socket (threads), sockets choices, flags
    ("Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz", "x86_64", 40, (1, 2), "intel"),
    ("Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz", "x86_64", 80, (2,), "intel"),
    ("Intel(R) Xeon(R) Silver 4214R CPU @ 2.40GHz", "x86_64", 24, (1, 2), "intel"),
    ("AMD EPYC 7543 32-Core Processor", "x86_64", 64, (1, 2), "amd"),
    ("AMD EPYC 9654 96-Core Processor", "x86_64", 192, (1, 2), "amd"),
    ("Ampere(R) Altra(R) Q80-30", "aarch64", 80, (1,), "arm"),
]
X86_FLAGS = (
    "fpu vme pse tsc msr pae cx8 apic sep pge cmov pat clflush mmx fxsr sse sse2 "
    "ht nx pdpe1gb lm"
).split()
"""The flags every x86_64 model here has."""
FLAGS = {
    "intel": X86_FLAGS + "vmx smx aes avx avx2 avx512f".split(),
    "amd": X86_FLAGS + "svm aes avx avx2 sev".split(),
    "arm": (
        "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid "
        "asimdrdm lrcpc dcpop"
    ).split(),
}
MEMORY_GIB = [64, 128, 192, 256, 384, 512, 768, 1024]
VENDORS = [
    ("Dell Inc.", "PowerEdge R650"),
    ("HPE", "ProLiant DL360 Gen10 Plus"),
    ("Lenovo", "ThinkSystem SR650 V2"),
    ("Supermicro", "SYS-1029U-TRT"),
    ("GIGABYTE", "R272-P30"),
]
NICS = [  # vendor, product, driver, speed
    ("0x8086", "0x1572", "i40e", 10000),
    ("0x8086", "0x1593", "ice", 25000),
    ("0x15b3", "0x101d", "mlx5_core", 100000),
    ("0x14e4", "0x165f", "tg3", 1000),
]
GPUS = [
    ("10de", "20b0", "NVIDIA A100"),
    ("10de", "2330", "NVIDIA H100"),
    ("1002", "740f", "AMD Instinct MI210"),
]
SWITCHES = ["sw-tor-01", "sw-tor-02", "sw-tor-03", "sw-spine-01"]


@dataclasses.dataclass
class Machine:
    """One virtual machine: what Ironic is told and what its ramdisk reports."""

    index: int
    name: str
    bmc_address: str
    macs: list[str]
    pxe_mac: str
    enroll_port: bool
    """Whether the lab creates its PXE port in Ironic (else lookup by BMC)."""
    behaviour: str
    """normal, error (the ramdisk reports an error), silent (never calls back)."""
    inventory: dict[str, Any]
    pci_devices: list[dict[str, str]]
    switch_ports: list[str]
    gpus: list[str]

    @property
    def cpus(self) -> int:
        return int(self.inventory["cpu"]["count"])

    @property
    def memory_mb(self) -> int:
        return int(self.inventory["memory"]["physical_mb"])

    @property
    def smallest_disk_gib(self) -> int:
        return min(d["size"] for d in self.inventory["disks"]) // GiB

    def payload(self, logs: bytes | None = None) -> dict[str, Any]:
        """The body ironic-python-agent posts to /v1/continue; with ``logs``
        (a gzipped tarball) its ``logs`` field, base64 as the agent sends it."""
        body: dict[str, Any] = {
            "inventory": self.inventory,
            "boot_interface": "01-" + self.pxe_mac.replace(":", "-"),
            "configuration": {
                "collectors": ["default", "logs"],
                "managers": [{"name": "generic_hardware_manager", "version": "1.2"}],
            },
            "error": (
                "Simulated ramdisk failure: cannot read SMART data of /dev/sda"
                if self.behaviour == "error"
                else None
            ),
            "pci_devices": self.pci_devices,
        }
        if logs is not None:
            body["logs"] = base64.b64encode(logs).decode()
        return body


def _mac(rng: random.Random, index: int, nic: int) -> str:
    return (
        f"52:54:{index >> 8 & 0xFF:02x}:{index & 0xFF:02x}:{nic:02x}:"
        f"{rng.randrange(256):02x}"
    )


def _disks(rng: random.Random, vendor: str) -> list[dict[str, Any]]:
    disks = []
    kinds = rng.sample(["nvme", "ssd", "hdd", "raid"], rng.randint(1, 4))
    sd = iter("abcdefgh")
    for n, kind in enumerate(sorted(kinds)):
        serial = f"S{rng.randrange(16**10):010X}"
        wwn = f"0x5{rng.randrange(16**15):015x}"
        if kind == "nvme":
            name, model, size, rot = (
                f"/dev/nvme{n}n1",
                "Samsung SSD PM1733",
                rng.choice([960, 1920, 3840]) * 10**9,
                False,
            )
        elif kind == "ssd":
            name, model, size, rot = (
                f"/dev/sd{next(sd)}",
                "INTEL SSDSC2KB480G8",
                480 * 10**9,
                False,
            )
        elif kind == "hdd":
            name, model, size, rot = (
                f"/dev/sd{next(sd)}",
                "ST8000NM000A",
                8 * 10**12,
                True,
            )
        else:
            name, model, size, rot = (
                f"/dev/sd{next(sd)}",
                "PERC H755 Front" if vendor.startswith("Dell") else "LOGICAL VOLUME",
                rng.choice([480, 960, 1920]) * 10**9,
                False,
            )
        disks.append(
            {
                "name": name,
                "model": model,
                "size": size,
                "rotational": rot,
                "wwn": wwn,
                "serial": serial,
                "vendor": vendor.split()[0].upper(),
                "wwn_with_extension": wwn,
                "wwn_vendor_extension": None,
                "hctl": f"{n}:0:0:0",
                "by_path": f"/dev/disk/by-path/pci-0000:{n + 1:02x}:00.0-scsi-0:0:0:0",
                "logical_sectors": 512,
                "physical_sectors": 4096,
                "tran": "nvme" if kind == "nvme" else "sas",
            }
        )
    return disks


def make_machine(index: int, seed: int = 0, behaviour: str = "normal") -> Machine:
    """Machine number ``index`` (1-based) of the lab with ``seed``."""
    rng = random.Random(seed * 100003 + index)
    model, arch, threads, sockets, family = rng.choice(CPUS)
    socket_count = rng.choice(sockets)
    manufacturer, product = rng.choice(VENDORS)
    nic_count = rng.randint(2, 6)
    nic_model = rng.choice(NICS)
    macs = [_mac(rng, index, n) for n in range(nic_count)]
    pxe = 0
    interfaces = []
    switch_ports = []
    for n, mac in enumerate(macs):
        tlvs = None
        if n < 2:
            switch = SWITCHES[(index + n) % len(SWITCHES)]
            port = f"Ethernet1/{(index * 2 + n) % 48 + 1}"
            tlvs = lldp.encode(
                chassis_mac=f"88:5a:92:{index % 256:02x}:00:{n:02x}",
                port_id=port,
                system_name=switch,
                vlan=100 + n if rng.random() < 0.5 else None,
                mtu=9216 if rng.random() < 0.5 else None,
            )
            switch_ports.append(f"{switch}:{port}")
        interfaces.append(
            {
                "name": f"eno{n + 1}",
                "mac_address": mac,
                "ipv4_address": f"10.{index >> 8 & 0xFF}.{index & 0xFF}.{n + 10}"
                if n == pxe
                else None,
                "ipv6_address": None,
                "has_carrier": n < 2,
                "lldp": tlvs,
                "vendor": nic_model[0],
                "product": nic_model[1],
                "client_id": None,
                "biosdevname": f"em{n + 1}",
                "speed_mbps": nic_model[3] if n < 2 else None,
                "pci_address": f"0000:{0x18 + n // 2:02x}:00.{n % 2}",
                "driver": nic_model[2],
            }
        )
    memory_gib = rng.choice(MEMORY_GIB)
    gpus: list[tuple[str, str, str]] = []
    if rng.random() < 0.3:
        gpus = [rng.choice(GPUS)] * rng.choice([1, 2, 4, 8])
    pci_devices = [
        {
            "vendor_id": v,
            "product_id": p,
            "class": "030200",
            "bus": f"0000:{0x80 + i:02x}:00.0",
        }
        for i, (v, p, _n) in enumerate(gpus)
    ]
    pci_devices.append(
        {
            "vendor_id": nic_model[0][2:],
            "product_id": nic_model[1][2:],
            "class": "020000",
            "bus": "0000:18:00.0",
        }
    )
    bmc = (
        f"192.0.2.{index}"
        if index < 255
        else f"198.51.{(index >> 8) & 0xFF}.{index & 0xFF}"
    )
    inventory = {
        "interfaces": interfaces,
        "cpu": {
            "model_name": model,
            "frequency": "2400.0000",
            "count": threads * socket_count,
            "architecture": arch,
            "socket_count": socket_count,
            "flags": FLAGS[family],
        },
        "disks": _disks(rng, manufacturer),
        "memory": {
            "total": memory_gib * GiB - 2 * 2**20,
            "physical_mb": memory_gib * 1024,
        },
        "bmc_address": bmc,
        "bmc_v6address": "::/0",
        "bmc_mac": f"d0:94:66:{index >> 8 & 0xFF:02x}:{index & 0xFF:02x}:01",
        "system_vendor": {
            "product_name": product,
            "manufacturer": manufacturer,
            "serial_number": f"LAB{seed:02d}{index:05d}",
        },
        "boot": {
            "current_boot_mode": rng.choice(["uefi", "uefi", "bios"]),
            "pxe_interface": macs[pxe],
        },
        "hostname": f"lab-{index:04d}",
    }
    return Machine(
        index=index,
        name=f"lab-{index:04d}",
        bmc_address=bmc,
        macs=macs,
        pxe_mac=macs[pxe],
        enroll_port=index % 2 == 0,
        behaviour=behaviour,
        inventory=inventory,
        pci_devices=pci_devices,
        switch_ports=switch_ports,
        gpus=[g[2] for g in gpus],
    )


def repair(machine: Machine) -> tuple[str, str]:
    """``machine`` after a visit to the data centre: its first disk
    replaced by a new one (another serial and WWN) and a quarter of its
    memory gone (a failed DIMM bank). What its ramdisk posts from now on
    changes with it. Returns the old and the new disk serial."""
    disk = machine.inventory["disks"][0]
    old = disk["serial"]
    digits = "".join(reversed(old[1:]))
    disk["serial"] = f"R{digits}"
    disk["wwn"] = disk["wwn_with_extension"] = "0x5" + "".join(
        reversed(disk["wwn"][3:])
    )
    memory = machine.inventory["memory"]
    memory["physical_mb"] -= memory["physical_mb"] // 4
    memory["total"] = memory["physical_mb"] * 2**20 - 2 * 2**20
    return old, disk["serial"]


def make_lab(
    count: int, seed: int = 0, behaviours: dict[int, str] | None = None
) -> list[Machine]:
    """``count`` machines; ``behaviours`` maps an index to error or silent."""
    behaviours = behaviours or {}
    return [
        make_machine(i, seed, behaviours.get(i, "normal")) for i in range(1, count + 1)
    ]


def unknown_machine(seed: int = 0) -> Machine:
    """A machine Ironic knows nothing about (for discovery)."""
    machine = make_machine(60000, seed)
    machine.name = "unknown"
    return machine
