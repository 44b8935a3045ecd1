"""root_disk_selection: choose the root disk by Ironic root device hints."""

import logging
import operator
import re
from collections.abc import Callable
from typing import Any

from inspector import exceptions
from inspector.hooks.base import Data, NodeContext, ProcessingHook

LOG = logging.getLogger(__name__)

GiB = 1024**3
MIN_ROOT_DISK_BYTES = 4 * GiB
"""Disks smaller than this cannot hold an image and are never chosen."""

STRING_HINTS = (
    "name",
    "model",
    "vendor",
    "serial",
    "wwn",
    "wwn_with_extension",
    "wwn_vendor_extension",
    "hctl",
    "by_path",
)

_SIZE_OPS: dict[str, Callable[[int, int], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}
_SIZE_RE = re.compile(r"^\s*(==|!=|>=|<=|>|<)?\s*(\d+)\s*$")


def _match_size(hint: Any, disk: Data) -> bool:
    size = disk.get("size")
    if not isinstance(size, int):
        return False
    match = _SIZE_RE.match(str(hint))
    if not match:
        raise exceptions.ProcessingError(
            f"Invalid root device hint size={hint!r}: expected a number of GiB, "
            "optionally after ==, !=, >=, <=, > or <"
        )
    op = _SIZE_OPS[match.group(1) or "=="]
    return op(size // GiB, int(match.group(2)))


def _match_string(hint: Any, value: Any) -> bool:
    if value is None:
        return False
    text, actual = str(hint).strip(), str(value)
    if text.startswith("<or>") or " <or> " in text:
        options = [o.strip() for o in text.split("<or>") if o.strip()]
        return any(_match_string(o, actual) for o in options)
    if text.startswith("<in>"):
        return text[4:].strip().lower() in actual.lower()
    if text.startswith("s!="):
        return actual != text[3:].strip()
    if text.startswith("s=="):
        text = text[3:].strip()
    return actual.lower() == text.lower()


def _match_bool(hint: Any, value: Any) -> bool:
    wanted = (
        hint
        if isinstance(hint, bool)
        else str(hint).strip().lower() in ("true", "1", "yes", "on")
    )
    return bool(value) == wanted


def matches(hints: Data, disk: Data) -> bool:
    for name, hint in hints.items():
        if name == "size":
            ok = _match_size(hint, disk)
        elif name == "rotational":
            ok = _match_bool(hint, disk.get("rotational"))
        elif name in STRING_HINTS:
            ok = _match_string(hint, disk.get(name))
        else:
            raise exceptions.ProcessingError(
                f"Unknown root device hint {name!r}; supported hints: size, "
                f"rotational, {', '.join(STRING_HINTS)}"
            )
        if not ok:
            return False
    return True


def _big_enough(disks: list[Any]) -> list[dict[str, Any]]:
    return [
        d
        for d in disks
        if isinstance(d, dict)
        and isinstance(d.get("size"), int)
        and d["size"] >= MIN_ROOT_DISK_BYTES
    ]


def without_hints(disks: list[Any]) -> dict[str, Any] | None:
    """The root disk chosen without hints: the smallest disk that can hold
    an image (None: none can, a diskless node)."""
    big_enough = _big_enough(disks)
    return min(big_enough, key=lambda d: d["size"]) if big_enough else None


class RootDiskSelectionHook(ProcessingHook):
    """Reads ``inventory.disks``, the node's ``properties.root_device`` and the
    ramdisk's ``root_disk``; writes ``root_disk`` into the data."""

    def before_update(self, data: Data, ctx: NodeContext) -> None:
        inventory = data.get("inventory") or {}
        disks = [d for d in inventory.get("disks") or [] if isinstance(d, dict)]
        hints = ctx.properties.get("root_device")
        if not disks:
            if hints:
                raise exceptions.ProcessingError(
                    f"No disks found in the inventory, so no disk can satisfy "
                    f"root device hints {hints}"
                )
            LOG.warning("Node %s reported no disks; local_gb will be 0", ctx.uuid)
            data.pop("root_disk", None)
            return
        big_enough = _big_enough(disks)
        if hints:
            if not isinstance(hints, dict):
                raise exceptions.ProcessingError(
                    f"Root device hints of node {ctx.uuid} must be an object, "
                    f"got {hints!r}"
                )
            chosen = [d for d in big_enough if matches(hints, d)]
            if not chosen:
                raise exceptions.ProcessingError(
                    f"No disks satisfied root device hints {hints} (disks: "
                    + ", ".join(
                        f"{d.get('name')} {d.get('size', 0) // GiB} GiB" for d in disks
                    )
                    + ")"
                )
            data["root_disk"] = chosen[0]
        elif isinstance(data.get("root_disk"), dict) and data["root_disk"].get("size"):
            return  # the ramdisk's own choice stands
        elif big_enough:
            data["root_disk"] = without_hints(disks)
        else:
            # as ironic-inspector: no disk can hold an image, so the node is
            # treated as diskless (the ramdisk sends no root_disk then)
            LOG.warning(
                "Node %s has no disk of at least 4 GiB (disks: %s); assuming "
                "a diskless node, local_gb will be 0",
                ctx.uuid,
                ", ".join(f"{d.get('name')} {d.get('size', 0)} bytes" for d in disks),
            )
            data.pop("root_disk", None)
            return
        LOG.info("Node %s root disk: %s", ctx.uuid, data["root_disk"].get("name"))
