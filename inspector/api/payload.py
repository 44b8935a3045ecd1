"""The ramdisk's payload (POST /v1/continue, reapply with a body): its shape
checked before anything is stored, and secrets removed.

Only the parts the service reads are constrained; ironic-python-agent
adds collectors over time and unknown keys are kept as they are. Values
under keys that look like secrets (``*password*``, ``*secret*``,
``*token*``, ...) are replaced with ``***`` before the data is stored, so
they are never returned by the data endpoints nor seen by rules.
"""

import functools
import re
import reprlib
from collections.abc import Callable
from typing import Any

import fastjsonschema

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


@functools.cache
def _check() -> Callable[[Any], Any]:
    """:data:`SCHEMA` compiled to Python by fastjsonschema, on first use."""
    return fastjsonschema.compile(SCHEMA)


def compile_schema() -> None:
    """Compile :data:`SCHEMA` now. The API does when it builds its
    application: each process pays the compilation (about 11 ms of CPU)
    at start-up instead of in its first ramdisk post, and a schema that
    cannot be compiled stops the start instead of failing posts."""
    _check()


SECRET_KEY = re.compile(
    r"pass(word|wd|phrase)?$|password|secret|token|"
    r"private_?key|credential",
    re.IGNORECASE,
)
REDACTED = "***"


def validate(data: dict[str, Any]) -> None:
    """:raises InvalidInput: naming where the payload has the wrong shape."""
    try:
        _check()(data)
    except fastjsonschema.JsonSchemaValueException as exc:
        where = "/".join(str(p) for p in exc.path[1:]) or "(the body)"
        raise exceptions.InvalidInput(
            f"Invalid ramdisk data at {where}: {_wording(exc)}"
        ) from None


def _short_repr() -> reprlib.Repr:
    shown = reprlib.Repr()
    shown.maxlevel = 2
    shown.maxlist = shown.maxtuple = shown.maxdict = 4
    shown.maxstring = shown.maxother = shown.maxlong = 64
    return shown


_SHORT = _short_repr()
"""The wrong value as a message shows it: the start of it, never the whole
of a large one (a payload of megabytes refused for its type costs no more
than a small one)."""


def _wording(exc: "fastjsonschema.JsonSchemaValueException") -> str:
    """What is wrong, in the words jsonschema used (no regex, no paths)."""
    shown = _SHORT.repr(exc.value)
    shown = shown if len(shown) <= 64 else shown[:61] + "..."
    if exc.rule == "pattern":  # a MAC: say so, not the regex
        return f"{str(exc.value)[:64]!r} is not a MAC address"
    if exc.rule == "type":
        kinds = exc.rule_definition
        names = kinds if isinstance(kinds, list) else [kinds]
        return f"{shown} is not of type {', '.join(repr(n) for n in names)}"
    if exc.rule == "maxItems":
        return f"more than {exc.rule_definition} items"
    if exc.rule == "maxLength":
        return f"{shown} is longer than {exc.rule_definition} characters"
    return str(exc.message)[:200]


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
