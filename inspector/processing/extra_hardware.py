"""extra_hardware: the "extra hardware" collector's data made navigable."""

import logging
from typing import Any

from inspector.processing.base import Data, ProcessingHook

LOG = logging.getLogger(__name__)


def _number(value: Any) -> Any:
    """'16' -> 16, '2.5' -> 2.5; anything else unchanged."""
    if not isinstance(value, str):
        return value
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


class ExtraHardwareHook(ProcessingHook):
    """Reads ``data``: ironic-python-agent's extra-hardware collector output,
    a list of ``[category, item, key, value]``; writes ``extra`` as
    ``extra[category][item][key] = value`` (numbers as numbers) and drops
    ``data``. Malformed entries are skipped with one warning. Nothing in
    Ironic: rules and other tools read ``extra`` from the stored data."""

    def before_processing(self, data: Data) -> None:
        if "data" not in data:
            return
        raw = data.pop("data")
        if not isinstance(raw, list):
            LOG.warning(
                "Extra hardware data is a %s, not a list: dropped", type(raw).__name__
            )
            return
        extra: dict[str, Any] = {}
        skipped = 0
        for entry in raw:
            if (
                not isinstance(entry, list | tuple)
                or len(entry) != 4
                or not all(isinstance(p, str) for p in entry[:3])
            ):
                skipped += 1
                continue
            category, item, key, value = entry
            node = extra.setdefault(category, {})
            leaf = node.setdefault(item, {})
            if not isinstance(leaf, dict):
                skipped += 1
                continue
            leaf[key] = _number(value)
        if skipped:
            LOG.warning("Skipped %d malformed extra hardware entries", skipped)
        data["extra"] = extra
