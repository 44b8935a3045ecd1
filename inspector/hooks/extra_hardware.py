"""extra_hardware: the "extra hardware" collector's data made navigable."""

import logging
from typing import Any

from inspector.hooks.base import Data, ProcessingHook

LOG = logging.getLogger(__name__)

ITEM_SIZE = 4
"""An entry is ``[category, item, key, value]``."""


def _integer(value: Any) -> Any:
    """'16' -> 16 as ironic-inspector converts; anything else unchanged."""
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return value
    return value


class ExtraHardwareHook(ProcessingHook):
    """Reads ``data``: ironic-python-agent's extra-hardware collector output,
    a list of ``[category, item, key, value]``; writes ``extra`` as
    ``extra[category][item][key] = value`` (integers as integers) and drops
    ``data``, as ironic-inspector does. Nothing in Ironic: rules and other
    tools read ``extra`` from the stored data.

    ``data`` that is not a list of lists is not converted and, with
    ``[extra_hardware]strict``, removed (kept otherwise, as upstream); with
    ``strict`` one entry of the wrong length refuses the whole list too.
    Without it, malformed entries are skipped with one warning."""

    def before_processing(self, data: Data) -> None:
        if "data" not in data:
            return
        raw = data["data"]
        strict = self.conf.extra_hardware.strict
        if not isinstance(raw, list) or not all(
            isinstance(entry, list) and (not strict or len(entry) == ITEM_SIZE)
            for entry in raw
        ):
            LOG.warning(
                "Extra hardware data is not a list of [category, item, key, "
                "value] lists: not converted%s",
                " and removed ([extra_hardware]strict)" if strict else "",
            )
            if strict:
                del data["data"]
            return
        extra: dict[str, Any] = {}
        skipped = 0
        for entry in raw:
            if len(entry) != ITEM_SIZE or not all(
                isinstance(p, str) for p in entry[:3]
            ):
                skipped += 1
                continue
            category, item, key, value = entry
            leaf = extra.setdefault(category, {}).setdefault(item, {})
            if not isinstance(leaf, dict):
                skipped += 1
                continue
            leaf[key] = _integer(value)
        if skipped:
            LOG.warning("Skipped %d malformed extra hardware entries", skipped)
        data["extra"] = extra
        del data["data"]
