"""sushy-tools' Redfish emulator on loopback, over libvirt's built-in test
driver: emulated machines without a libvirt daemon or a hypervisor.

The machines are libvirt domain XML generated here (:func:`domain_xml`),
defined into the in-process ``test:///default`` connection of the
emulator's own process (``python -m lab.servers.redfish_emulator DIR``) before the
emulator starts: ``--libvirt-uri test:///FILE`` would re-read the file at
each connection, so power state would never stick. libvirt's Python
binding is Debian's ``python3-libvirt`` (tools/ensure-packages.sh), made
visible to the emulator by links to its two files in a private directory
on the child's ``PYTHONPATH``: the test virtualenv itself is not changed
and no compiler is needed.

What the emulator lacks (doc/redfish.md): memory only in whole GiB, no
DIMMs, PCIe devices, LLDP, model or serial.
"""

import dataclasses
import glob
import os
import pathlib
import sys
from typing import Any

import bcrypt

from lab import checkout
from lab.servers import loopback
from lab.servers.process import ServerProcess

SYSTEM_PACKAGES = pathlib.Path("/usr/lib/python3/dist-packages")
USERNAME = "admin"
PASSWORD = "lab-redfish"


@dataclasses.dataclass
class EmulatedMachine:
    """One libvirt domain, one Redfish system."""

    name: str
    uuid: str
    macs: list[str]
    cpus: int = 2
    memory_gib: int = 4
    disk_gib: int = 0
    """A drive of this size behind the storage controller (0: a controller
    with no drives, whose ``Drives`` the emulator leaves out: sushy's
    TypeError)."""


def domain_xml(machine: EmulatedMachine) -> str:
    """The domain XML libvirt's test driver takes for ``machine``."""
    nics = "".join(
        f"<interface type='network'><mac address='{mac}'/>"
        "<source network='default'/><model type='virtio'/></interface>"
        for mac in machine.macs
    )
    memory = machine.memory_gib * 1024 * 1024
    return (
        f"<domain type='test'><name>{machine.name}</name><uuid>{machine.uuid}</uuid>"
        f"<memory unit='KiB'>{memory}</memory>"
        f"<currentMemory unit='KiB'>{memory}</currentMemory>"
        f"<vcpu>{machine.cpus}</vcpu>"
        "<os><type arch='x86_64'>hvm</type><boot dev='hd'/></os>"
        f"<devices>{nics}</devices></domain>"
    )


def storage(machines: list[EmulatedMachine]) -> dict[str, Any]:
    """The emulator's SUSHY_EMULATOR_STORAGE: one controller per machine
    (the libvirt driver has no drives of its own)."""
    return {
        m.uuid: [
            {
                "Id": "1",
                "Name": "Local Storage Controller",
                "StorageControllers": [
                    {"MemberId": "0", "Name": "Lab RAID", "SpeedGbps": 12}
                ],
                "Drives": ["d0"] if m.disk_gib else [],
            }
        ]
        for m in machines
    }


def drives(machines: list[EmulatedMachine]) -> dict[tuple[str, str], Any]:
    """The emulator's SUSHY_EMULATOR_DRIVES: the machines' one drive each."""
    return {
        (m.uuid, "1"): [
            {
                "Id": "d0",
                "Name": "Drive 0",
                "CapacityBytes": m.disk_gib * 1024**3,
                "Protocol": "SATA",
            }
        ]
        for m in machines
        if m.disk_gib
    }


def volumes(machines: list[EmulatedMachine]) -> dict[tuple[str, str], Any]:
    """The emulator's SUSHY_EMULATOR_VOLUMES: none, but a collection."""
    return {(m.uuid, "1"): [] for m in machines}


def libvirt_files() -> list[pathlib.Path]:
    """The two files of Debian's binding (the module and its extension)."""
    found = [SYSTEM_PACKAGES / "libvirt.py"]
    found += [
        pathlib.Path(p) for p in glob.glob(str(SYSTEM_PACKAGES / "libvirtmod.*.so"))
    ]
    if len(found) < 2 or not found[0].exists():
        raise RuntimeError(
            "libvirt's Python binding is not installed: run "
            "tools/ensure-packages.sh (Debian package python3-libvirt)"
        )
    return found


class RedfishEmulator(ServerProcess):
    """The emulator with ``machines`` on 127.0.0.1, a free port, in
    ``work_dir``; basic authentication as USERNAME/PASSWORD. ``url`` is
    what a node's ``redfish_address`` names; ``stop()`` ends it by its PID."""

    name = "The Redfish emulator"

    def __init__(self, work_dir: pathlib.Path, machines: list[EmulatedMachine]) -> None:
        super().__init__(work_dir, "emulator.log")
        self.machines = machines

    def system_id(self, machine: EmulatedMachine) -> str:
        return f"/redfish/v1/Systems/{machine.uuid}"

    def start(self, timeout: float = 60.0) -> None:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        binding = self.work_dir / "libvirt-binding"
        binding.mkdir(exist_ok=True)
        for source in libvirt_files():
            link = binding / source.name
            if not link.exists():
                link.symlink_to(source)
        domains = self.work_dir / "domains"
        domains.mkdir(exist_ok=True)
        for machine in self.machines:
            (domains / f"{machine.name}.xml").write_text(domain_xml(machine))
        # a cheap hash: the emulator checks it at every request
        hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=4))
        auth = self.work_dir / "htpasswd"
        auth.write_text(f"{USERNAME}:{hashed.decode()}\n")
        config = self.work_dir / "emulator.conf"
        config.write_text(
            f"SUSHY_EMULATOR_AUTH_FILE = {str(auth)!r}\n"
            "SUSHY_EMULATOR_IGNORE_BOOT_DEVICE = False\n"
            f"SUSHY_EMULATOR_STORAGE = {storage(self.machines)!r}\n"
            f"SUSHY_EMULATOR_DRIVES = {drives(self.machines)!r}\n"
            # an empty Volumes collection per controller: without it the
            # emulator answers 500, which Ironic's sushy retries 10 times
            # 3 s apart (30 s per inspection by Ironic's redfish interface)
            f"SUSHY_EMULATOR_VOLUMES = {volumes(self.machines)!r}\n"
        )
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(binding), str(checkout.ROOT)]
            + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
        )
        self._spawn(
            [
                sys.executable,
                "-m",
                "lab.servers.redfish_emulator",
                str(domains),
                "--config",
                str(config),
                "--interface",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--libvirt-uri",
                "test:///default",
            ],
            env=env,
            session=True,
        )
        self._await(
            lambda: loopback.answers_http(self.url + "/redfish/v1/"),
            timeout,
            f"the emulator to answer on {self.url}",
        )


def _serve(argv: list[str]) -> int:
    """The emulator's process: define the domains in ``argv[0]`` into the
    in-process test driver, then run sushy-tools' emulator with the rest."""
    import libvirt
    from sushy_tools.emulator import main as emulator

    connection = libvirt.open("test:///default")
    # the test driver's stock domain is no machine of ours
    for domain in connection.listAllDomains():
        if domain.isActive():
            domain.destroy()
        domain.undefine()
    for path in sorted(pathlib.Path(argv[0]).glob("*.xml")):
        connection.defineXML(path.read_text())
    sys.argv = ["sushy-emulator", *argv[1:]]
    # the connection stays open: the driver's state lives while it does
    result: int = emulator.main()
    connection.close()
    return result


if __name__ == "__main__":
    sys.exit(_serve(sys.argv[1:]))
