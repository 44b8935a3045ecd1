"""MAC addresses as the service compares them: lower case, colon-separated.

Both sides read MACs: the intake matching a ramdisk's post to a node
(:mod:`inspector.intake.lookup`) and the processing hooks
(:mod:`inspector.hooks.interfaces`); neither imports the other.
"""

from typing import Any


def normalise(value: Any) -> str | None:
    """``value`` as ``aa:bb:cc:dd:ee:ff`` (``-`` separators accepted), or
    None when it is not an Ethernet MAC."""
    if not isinstance(value, str):
        return None
    mac = value.strip().lower().replace("-", ":")
    parts = mac.split(":")
    if len(parts) != 6 or not all(len(p) == 2 for p in parts):
        return None
    try:
        [int(p, 16) for p in parts]
    except ValueError:
        return None
    return mac
