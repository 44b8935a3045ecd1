"""What one push sends: the node's identity and its inspection's start as
Ironic's node shows them, the inventory, the plugin data and, apart, the
ramdisk's logs, as one JSON document."""

import datetime
import json
from typing import Any

LOGS = "logs"
"""The plugin data's key for the ramdisk's logs (agent inspection)."""


def utc_iso(value: Any) -> str | None:
    """An ISO 8601 time in UTC with its offset; a naive datetime is taken
    as UTC (Ironic's database keeps UTC), a string passes as it is."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.UTC)
        return value.astimezone(datetime.UTC).isoformat()
    if isinstance(value, str) and value:
        return value
    return None


def build(node: Any, inventory: Any, plugin_data: Any) -> dict[str, Any]:
    """The push of ``node``'s inspection. ``plugin_data`` is left as it
    is (other hooks read it after this one)."""
    plugin = plugin_data if isinstance(plugin_data, dict) else {}
    return {
        "node_uuid": getattr(node, "uuid", None),
        "node_name": getattr(node, "name", None),
        "inspect_interface": getattr(node, "inspect_interface", None),
        "inspection_started_at": utc_iso(getattr(node, "inspection_started_at", None)),
        "inventory": inventory,
        "plugin_data": {k: v for k, v in plugin.items() if k != LOGS},
        LOGS: plugin.get(LOGS) or None,
    }


def encode(push: dict[str, Any]) -> bytes:
    """``push`` as compact JSON; a value JSON cannot hold (a datetime an
    out-of-band hook left in the plugin data) as its text."""
    return json.dumps(push, default=str, separators=(",", ":")).encode("utf-8")
