"""Runs the real ironic-python-agent's inspection on this machine.

IPA (PyPI ``ironic-python-agent``) is installed once into its own virtualenv
under the lab cache. A run is one child process of that virtualenv: it reads
an emulated kernel command line (IPA's ``ipa-*`` parameters and ``BOOTIF``)
instead of ``/proc/cmdline``, turns the agent's start-up steps that would
change the host into logged no-ops, and calls IPA's own one-shot inspection
entry point (``ironic-collect-introspection-data``), whose collectors gather
this machine's inventory and whose HTTP client posts it to the callback URL.

``python -m lab.machines.real_agent child ...`` is that child's entry point, with the
checkout on its ``PYTHONPATH``: of ours it imports only this module and
``lab.venvs``, which need nothing beyond the standard library.
"""

import argparse
import dataclasses
import importlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from lab import checkout
from lab.venvs import install_venv

IPA_REQUIREMENT = "ironic-python-agent==13.0.0"

MIN_ROOT_DISK = 4 * 1024**3
"""IPA's (and ironic-inspector's) smallest root disk: 4 GiB."""

COLLECTORS = "default,logs"
"""IPA's default collectors: the inventory, then the ramdisk's logs."""

NEUTRALISED = {
    "_check_for_iscsi": "iscsistart -b would log in to the iSCSI targets of iBFT",
    "_md_scan_and_assemble": "mdadm --assemble --scan would start RAID arrays",
    "_load_ipmi_modules": "modprobe would load the IPMI kernel modules",
    "_enable_multipath": "modprobe dm_multipath and starting multipathd",
}
"""``ironic_python_agent.hardware`` functions that the generic hardware
manager's ``initialize()`` calls before inspecting and that change the host:
the child replaces each with a no-op that logs the reason given here (what a
ramdisk does to its own throw-away system). Everything else IPA runs for
inspection only reads: sysfs, ``lscpu``, ``lsblk``, ``lshw``, ``ipmitool lan
print`` (not even tried when no IPMI device exists), and for the logs
collector ``journalctl``, ``dmesg``, ``ip addr``, ``iptables -L``, ``parted
-l``, ``multipath -ll``, ``mount``, ``df``, ``ps`` (a missing one is left
out of the tarball)."""

SKIPPED_WHEN_MISSING = {
    "udevadm": (
        "disk_utils.udev_settle",
        "no udev on this machine (udevadm settle only waits for its event queue)",
    ),
}
"""Tools IPA calls without catching their absence, by the step that calls
them: when the tool is missing here the child skips that step (logged),
since there is nothing for it to do. With the tool present IPA runs it."""

REQUIRED_TOOLS = ("lshw", "lsblk")
"""Commands IPA 13's inventory cannot do without: the generic hardware
manager fails the whole inventory when ``lshw`` is missing (a real ramdisk
always has it); ``lsblk`` lists the disks. Other tools (``ipmitool``,
``dmidecode``, ``biosdevname``, ``mdadm``) are optional: IPA skips what they
would report."""

DEBIAN_PACKAGES = {"lshw": "lshw", "lsblk": "util-linux"}


class AgentUnavailable(RuntimeError):
    """A prerequisite of the real agent cannot be had on this machine."""


def ensure_tools() -> None:
    """Install the Debian packages of missing :data:`REQUIRED_TOOLS` (as root).

    :raises AgentUnavailable: naming the tool, when it is missing and this
        process cannot install it (not root, no apt-get).
    :raises RuntimeError: when installing failed.
    """
    missing = [tool for tool in REQUIRED_TOOLS if shutil.which(tool) is None]
    if not missing:
        return
    packages = sorted({DEBIAN_PACKAGES[tool] for tool in missing})
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise AgentUnavailable(
            f"IPA's inventory needs {', '.join(missing)} (Debian package "
            f"{', '.join(packages)}); not root or no apt-get to install it"
        )
    print(f"Installing Debian packages: {' '.join(packages)}", file=sys.stderr)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    command = ["apt-get", "install", "-y", "-qq", "--no-install-recommends"]
    if subprocess.run(command + packages, env=env, capture_output=True).returncode:
        subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True)
        result = subprocess.run(
            command + packages, env=env, capture_output=True, text=True
        )
        if result.returncode:
            raise RuntimeError(
                f"installing {' '.join(packages)} failed: {result.stderr[-2000:]}"
            )


def nic_macs(physical_only: bool = False) -> dict[str, str]:
    """This machine's NICs with a MAC, name -> MAC, as IPA lists them: the
    entries of /sys/class/net with a ``device`` link (physical NICs), bonds
    and VLAN interfaces (``NAME.ID``); no loopback, bridge or dummy.
    ``physical_only``: NICs with a device link only (what a machine can
    PXE-boot from)."""
    found = {}
    net = pathlib.Path("/sys/class/net")
    for entry in sorted(net.iterdir()):
        physical = (entry / "device").exists()
        vlan = entry.name.partition(".")[2].isdigit()
        bond = (entry / "bonding").exists()
        if not physical and (physical_only or not (vlan or bond)):
            continue
        try:
            mac = (entry / "address").read_text().strip().lower()
        except OSError:
            continue
        if mac and mac != "00:00:00:00:00:00":
            found[entry.name] = mac
    return found


def bootif(mac: str, form: str) -> str:
    """``BOOTIF`` as a boot loader writes it: ``pxelinux`` (``01-`` and the
    MAC with dashes, Ethernet's ARP type first) or ``ipxe`` (the MAC as is)."""
    if form == "pxelinux":
        return "01-" + mac.lower().replace(":", "-")
    if form == "ipxe":
        return mac.lower()
    raise ValueError(f"unknown BOOTIF form {form!r}")


@dataclasses.dataclass
class AgentRun:
    """What one run of the agent came to."""

    returncode: int
    seconds: float
    log: str
    result: dict[str, Any]
    """The child's report: ``params`` (the kernel parameters IPA read),
    ``uuid`` (what /v1/continue answered, None if the post failed),
    ``neutralised`` (the no-op'd steps IPA called) and ``hidden_disks``
    (disks kept from IPA's view, by name)."""


class RealAgent:
    """IPA 13.0.0 in its own cached virtualenv, run against a callback URL."""

    def __init__(self, cache_dir: pathlib.Path, work_dir: pathlib.Path) -> None:
        self.cache_dir = pathlib.Path(cache_dir)
        self.work_dir = pathlib.Path(work_dir)
        self.venv = self.cache_dir / "ipa-venv"
        self._runs = 0

    @property
    def python(self) -> pathlib.Path:
        return self.venv / "bin" / "python"

    def install(self) -> pathlib.Path:
        """Install IPA and the tools its inventory needs, once; later calls
        return at once (the venv's stamp file)."""
        ensure_tools()
        return install_venv(self.venv, IPA_REQUIREMENT, "ironic-python-agent", "15 s")

    def cmdline(
        self, callback_url: str, boot_mac: str, bootif_form: str = "pxelinux"
    ) -> str:
        """The kernel command line a PXE boot for inspection gives the agent
        (as Ironic's and ironic-inspector's PXE templates write it).

        ``ipa-inspection-dhcp-wait-timeout=0``: a ramdisk first waits for
        DHCP on the PXE NIC; nothing serves DHCP here (the wait only reads
        addresses, but a NIC without IPv4 would cost 60 s).
        ``ipa-disk-wait-attempts=1``: look for the root disk once, not ten
        times 3 s when there is none."""
        return " ".join(
            [
                "BOOT_IMAGE=/ironic-agent.kernel",
                f"ipa-inspection-callback-url={callback_url}",
                f"ipa-inspection-collectors={COLLECTORS}",
                "ipa-inspection-dhcp-wait-timeout=0",
                "ipa-disk-wait-attempts=1",
                "ipa-collect-lldp=0",
                "systemd.journald.forward_to_console=yes",
                f"BOOTIF={bootif(boot_mac, bootif_form)}",
            ]
        )

    def run(
        self,
        callback_url: str,
        boot_mac: str,
        bootif_form: str = "pxelinux",
        hide_disks_from: int | None = None,
        timeout: float = 300,
    ) -> AgentRun:
        """Runs one inspection: IPA collects and posts to ``callback_url``.

        :param boot_mac: the NIC named by ``BOOTIF``.
        :param hide_disks_from: disks of this size (bytes) or more are kept
            from IPA's block-device listing (the child filters the generic
            hardware manager's list), e.g. :data:`MIN_ROOT_DISK` for a
            machine with no disk big enough to be a root disk.
        """
        self.install()
        self._runs += 1
        run_dir = self.work_dir / f"agent-{self._runs}"
        run_dir.mkdir(parents=True, exist_ok=True)
        cmdline_file = run_dir / "cmdline"
        cmdline_file.write_text(self.cmdline(callback_url, boot_mac, bootif_form))
        result_file = run_dir / "result.json"
        log_file = run_dir / "agent.log"
        command = [
            str(self.python),
            "-m",
            "lab.machines.real_agent",
            "child",
            "--cmdline",
            str(cmdline_file),
            "--result",
            str(result_file),
        ]
        if hide_disks_from is not None:
            command += ["--hide-disks-from", str(hide_disks_from)]
        env = dict(os.environ, PYTHONPATH=str(checkout.ROOT))
        env.pop("PYTHONHOME", None)
        started = time.monotonic()
        with open(log_file, "wb") as output:
            proc = subprocess.run(
                command,
                stdout=output,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=run_dir,
                timeout=timeout,
                check=False,
            )
        seconds = time.monotonic() - started
        result = json.loads(result_file.read_text()) if result_file.exists() else {}
        return AgentRun(
            proc.returncode, seconds, log_file.read_text(errors="replace"), result
        )


# The child: runs inside IPA's virtualenv.


def _child(args: argparse.Namespace) -> int:
    # IPA's modules are imported here, in the child only: its virtualenv has
    # them, the project's has not.
    from ironic_python_agent import utils

    read_params = utils._read_params_from_file

    def read_emulated(filepath: str) -> dict[str, str]:
        # IPA reads its parameters from /proc/cmdline (and caches them):
        # the emulated command line is read instead, by IPA's own parser
        if filepath == "/proc/cmdline":
            filepath = args.cmdline
        return dict(read_params(filepath))

    utils._read_params_from_file = read_emulated
    utils._set_cached_params({})

    # config first: it registers the options the others read at import time,
    # and reads the kernel command line (APARAMS) as it is imported
    from ironic_python_agent import config, hardware, inspector
    from ironic_python_agent.cmd import inspect as inspect_cmd

    report: dict[str, Any] = {"uuid": None, "neutralised": [], "hidden_disks": []}
    report["params"] = dict(config.APARAMS)
    # a step may run many times: the report names it once

    def no_op(name: str, reason: str) -> Callable[..., bool]:
        def skipped(*_args: object, **_kwargs: object) -> bool:
            print(f"lab: skipped {name}: {reason}", file=sys.stderr, flush=True)
            if name not in report["neutralised"]:
                report["neutralised"].append(name)
            return False

        return skipped

    for name, reason in NEUTRALISED.items():
        setattr(hardware, name, no_op(name, reason))
    for tool, (step, reason) in SKIPPED_WHEN_MISSING.items():
        if shutil.which(tool) is None:
            module_name, function = step.split(".")
            module = importlib.import_module(f"ironic_python_agent.{module_name}")
            setattr(module, function, no_op(step, reason))

    if args.hide_disks_from is not None:
        manager = hardware.GenericHardwareManager
        list_block_devices = manager.list_block_devices
        limit = args.hide_disks_from

        def small_disks_only(self: Any, *a: Any, **kw: Any) -> list[Any]:
            devices = list_block_devices(self, *a, **kw)
            for dev in devices:
                if dev.size >= limit and dev.name not in report["hidden_disks"]:
                    report["hidden_disks"].append(dev.name)
            return [dev for dev in devices if dev.size < limit]

        manager.list_block_devices = small_disks_only

    inspect = inspector.inspect

    def recording_inspect() -> Any:
        # what would change the host is off: LLDP collection brings NICs up,
        # VLAN interfaces are created; refuse to run should a file set them
        conf = config.CONF
        if conf.collect_lldp or conf.enable_vlan_interfaces:
            raise RuntimeError("lab: collect_lldp or enable_vlan_interfaces is set")
        report["uuid"] = inspect()
        return report["uuid"]

    inspector.inspect = recording_inspect
    # the console script ironic-collect-introspection-data: no configuration
    # file (the command line is the configuration), debug logs
    sys.argv = ["ironic-collect-introspection-data", "--debug"]
    try:
        inspect_cmd.run()
    finally:
        pathlib.Path(args.result).write_text(json.dumps(report))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.machines.real_agent")
    sub = parser.add_subparsers(dest="command", required=True)
    child = sub.add_parser("child", help="run IPA's inspection (in IPA's venv)")
    child.add_argument("--cmdline", required=True, help="emulated /proc/cmdline")
    child.add_argument("--result", required=True, help="where the report goes")
    child.add_argument("--hide-disks-from", type=int, default=None)
    args = parser.parse_args(argv)
    return _child(args)


if __name__ == "__main__":
    sys.exit(main())
