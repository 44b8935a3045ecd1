"""The ramdisk's payload (POST /v1/continue, reapply with a body): its shape
checked before anything is stored, and secrets removed.

Only the parts the service reads are constrained; ironic-python-agent
adds collectors over time and unknown keys are kept as they are. Values
under keys that look like secrets (``*password*``, ``*secret*``,
``*token*``, ...) are replaced with ``***`` before the data is stored, so
they are never returned by the data endpoints nor seen by rules.
"""

import re
from typing import Any

import jsonschema

from inspector import exceptions

NAME_LENGTH = 255
"""Longest interface name."""
LLDP_ITEMS = 512
"""Most LLDP TLVs of one interface."""
INTERFACES = 1024
"""Most interfaces of one machine."""
DEVICES = 4096
"""Most disks, and most PCI devices, of one machine."""

_STRING_OR_NULL = {"type": ["string", "null"]}
_OCTET = "[0-9A-Fa-f]{2}"
_MAC = {
    "type": ["string", "null"],
    # Ethernet (6 octets, ':' or '-') or InfiniBand (20 octets); '' = none
    "pattern": f"^$|^{_OCTET}([:-]{_OCTET}){{5}}$|^{_OCTET}(:{_OCTET}){{19}}$",
}
_BOOT_INTERFACE = {
    "type": ["string", "null"],
    # the PXE form ironic-python-agent sends (01-aa-bb-...), or a plain MAC
    "pattern": f"^$|^(01-)?{_OCTET}([:-]{_OCTET}){{5}}$",
}
_INTERFACE = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": NAME_LENGTH},
        "mac_address": _MAC,
        "ipv4_address": _STRING_OR_NULL,
        "ipv6_address": _STRING_OR_NULL,
        "lldp": {"type": ["array", "null"], "maxItems": LLDP_ITEMS},
    },
}
SCHEMA = {
    "type": "object",
    "properties": {
        "error": _STRING_OR_NULL,
        "boot_interface": _BOOT_INTERFACE,
        "inventory": {
            "type": "object",
            "properties": {
                "interfaces": {
                    "type": "array",
                    "items": _INTERFACE,
                    "maxItems": INTERFACES,
                },
                "disks": {
                    "type": "array",
                    "items": {"type": "object"},
                    "maxItems": DEVICES,
                },
                "cpu": {"type": "object"},
                "memory": {"type": "object"},
                "bmc_address": _STRING_OR_NULL,
                "bmc_v6address": _STRING_OR_NULL,
                "system_vendor": {"type": "object"},
                "boot": {"type": "object"},
            },
        },
        "pci_devices": {
            "type": "array",
            "items": {"type": "object"},
            "maxItems": DEVICES,
        },
        "root_disk": {"type": ["object", "null"]},
    },
}
_VALIDATOR = jsonschema.Draft7Validator(SCHEMA)

SECRET_KEY = re.compile(
    r"pass(word|wd|phrase)?$|password|secret|token|"
    r"private_?key|credential",
    re.IGNORECASE,
)
REDACTED = "***"


_MAC_PATTERN = re.compile(str(_MAC["pattern"]))
_BOOT_INTERFACE_PATTERN = re.compile(str(_BOOT_INTERFACE["pattern"]))
_INVENTORY_OBJECTS = ("cpu", "memory", "system_vendor", "boot")


def _text_or_null(value: Any, pattern: "re.Pattern[str] | None" = None) -> bool:
    if value is None:
        return True
    if not isinstance(value, str):
        return False
    return pattern is None or pattern.search(value) is not None


def _objects(value: Any, most: int) -> bool:
    return (
        isinstance(value, list)
        and len(value) <= most
        and all(isinstance(item, dict) for item in value)
    )


def _interface_conforms(interface: Any) -> bool:
    if not isinstance(interface, dict):
        return False
    name = interface.get("name")
    lldp = interface.get("lldp")
    return (
        (
            "name" not in interface
            or (isinstance(name, str) and len(name) <= NAME_LENGTH)
        )
        and _text_or_null(interface.get("mac_address"), _MAC_PATTERN)
        and _text_or_null(interface.get("ipv4_address"))
        and _text_or_null(interface.get("ipv6_address"))
        and (lldp is None or (isinstance(lldp, list) and len(lldp) <= LLDP_ITEMS))
    )


def _inventory_conforms(inventory: dict[str, Any]) -> bool:
    interfaces = inventory.get("interfaces", [])
    disks = inventory.get("disks", [])
    return (
        isinstance(interfaces, list)
        and len(interfaces) <= INTERFACES
        and all(_interface_conforms(i) for i in interfaces)
        and _objects(disks, DEVICES)
        and all(isinstance(inventory.get(k, {}), dict) for k in _INVENTORY_OBJECTS)
        and _text_or_null(inventory.get("bmc_address"))
        and _text_or_null(inventory.get("bmc_v6address"))
    )


def conforms(data: Any) -> bool:
    """Whether ``data`` meets :data:`SCHEMA`: the same answer as jsonschema,
    written out for the one schema (jsonschema's walk was 7 % of the API's
    CPU under load). jsonschema still words the error of one that does not
    (:func:`validate`); a unit test compares the two on many payloads."""
    if not isinstance(data, dict):
        return False
    inventory = data.get("inventory", {})
    root_disk = data.get("root_disk")
    return (
        _text_or_null(data.get("error"))
        and _text_or_null(data.get("boot_interface"), _BOOT_INTERFACE_PATTERN)
        and isinstance(inventory, dict)
        and _inventory_conforms(inventory)
        and _objects(data.get("pci_devices", []), DEVICES)
        and (root_disk is None or isinstance(root_disk, dict))
    )


def validate(data: dict[str, Any]) -> None:
    """:raises InvalidInput: naming where the payload has the wrong shape."""
    if conforms(data):
        return
    error = next(iter(sorted(_VALIDATOR.iter_errors(data), key=lambda e: e.path)), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(the body)"
        message = error.message[:200]
        if error.validator == "pattern":  # a MAC: say so, not the regex
            message = f"{str(error.instance)[:64]!r} is not a MAC address"
        raise exceptions.InvalidInput(f"Invalid ramdisk data at {where}: {message}")


_SECRET_KEYS: dict[str, bool] = {}
"""Whether a key looks like a secret, per key seen (a payload repeats a
few dozen keys; the pattern is tried once for each)."""
_KEYS_REMEMBERED = 4096


def _secret(key: str) -> bool:
    found = _SECRET_KEYS.get(key)
    if found is None:
        found = SECRET_KEY.search(key) is not None
        if len(_SECRET_KEYS) < _KEYS_REMEMBERED:
            _SECRET_KEYS[key] = found
    return found


def redact(value: Any) -> Any:
    """``value`` with the values of secret-looking keys replaced, in place."""
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and _secret(key) and item not in (None, ""):
                value[key] = REDACTED
            elif isinstance(item, (dict, list)):
                redact(item)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, (dict, list)):
                redact(item)
    return value
