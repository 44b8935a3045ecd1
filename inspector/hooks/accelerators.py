"""accelerators: GPUs and FPGAs among the PCI devices the ramdisk found."""

import logging
from typing import Any

import yaml
from oslo_config import cfg

from inspector import exceptions
from inspector.hooks.base import Data, NodeContext, ProcessingHook

LOG = logging.getLogger(__name__)

KNOWN = [
    # the first two as ironic-inspector's known_accelerators.yaml names them
    ("10de", "1eb8", "GPU", "NVIDIA Corporation Tesla T4"),
    ("10de", "1df6", "GPU", "NVIDIA Corporation GV100GL"),
    ("10de", "1db4", "GPU", "NVIDIA Tesla V100"),
    ("10de", "20b0", "GPU", "NVIDIA A100"),
    ("10de", "20b5", "GPU", "NVIDIA A100 80GB"),
    ("10de", "20b7", "GPU", "NVIDIA A30"),
    ("10de", "2236", "GPU", "NVIDIA A10"),
    ("10de", "2330", "GPU", "NVIDIA H100"),
    ("10de", "26b9", "GPU", "NVIDIA L40S"),
    ("10de", "27b8", "GPU", "NVIDIA L4"),
    ("1002", "7408", "GPU", "AMD Instinct MI250"),
    ("1002", "740f", "GPU", "AMD Instinct MI210"),
    ("8086", "09c4", "FPGA", "Intel PAC Arria 10"),
]
"""(vendor id, device id, type, description) recognised without a file."""


def _id(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = value.strip().lower().removeprefix("0x")
    return (
        text if len(text) == 4 and all(c in "0123456789abcdef" for c in text) else None
    )


def load_known(path: str | None) -> dict[tuple[str, str], tuple[str, str]]:
    """(vendor, device) -> (type, description).

    :raises ConfigError: naming the option and the file when it is unusable.
    """
    entries: list[Any] = [
        {"vendor_id": v, "device_id": d, "type": t, "device_info": i}
        for v, d, t, i in KNOWN
    ]
    if path:
        try:
            # YAML as ironic-inspector's file (JSON is YAML too)
            with open(path, encoding="utf-8") as handle:
                entries = yaml.safe_load(handle)["pci_devices"]
            if not isinstance(entries, list):
                raise ValueError("pci_devices is not a list")
        except (OSError, ValueError, KeyError, TypeError, yaml.YAMLError) as exc:
            raise exceptions.ConfigError(
                f"Invalid configuration: [accelerators]known_devices {path}: {exc}"
            ) from exc
    known = {}
    for entry in entries:
        vendor = _id(entry.get("vendor_id")) if isinstance(entry, dict) else None
        device = _id(entry.get("device_id")) if isinstance(entry, dict) else None
        if vendor is None or device is None:
            raise exceptions.ConfigError(
                f"Invalid configuration: [accelerators]known_devices: entry "
                f"{entry!r} needs 4-digit hex vendor_id and device_id"
            )
        known[(vendor, device)] = (
            str(entry.get("type", "GPU")),
            str(entry.get("device_info", "")),
        )
    return known


class AcceleratorsHook(ProcessingHook):
    """Reads ``pci_devices`` (vendor and product ids from the ramdisk);
    writes ``accel_devices`` in the data (``vendor_id``, ``device_id``,
    ``type``, ``device_info``, ``pci_address``) for the devices
    ``[accelerators]known_devices`` (or the built-in list) knows, and the
    node property ``accel_count`` when there is at least one."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        super().__init__(conf)
        self.known = load_known(conf.accelerators.known_devices)

    def before_update(self, data: Data, ctx: NodeContext) -> None:
        devices = data.get("pci_devices")
        found = []
        for device in devices if isinstance(devices, list) else []:
            if not isinstance(device, dict):
                continue
            key = (_id(device.get("vendor_id")), _id(device.get("product_id")))
            match = self.known.get(key)  # type: ignore[arg-type]
            if match is not None:
                found.append(
                    {
                        "vendor_id": key[0],
                        "device_id": key[1],
                        "type": match[0],
                        "device_info": match[1],
                        "pci_address": device.get("bus"),
                    }
                )
        data["accel_devices"] = found
        if found:
            ctx.patch("/properties/accel_count", len(found))
            LOG.info(
                "Node %s: %d accelerators (%s)",
                ctx.uuid,
                len(found),
                ", ".join(sorted({str(d["device_info"]) for d in found})),
            )
