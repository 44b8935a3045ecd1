"""How the fleet page writes values for an operator: sizes in the units
they are bought in (memory in GiB, disks in GB or TB, NICs in Gb/s),
times in UTC to the second with their zone, a hardware component as its
fields, who made a run. Pure: the templates call these as filters."""

import datetime
from typing import Any

SOURCES = {"inspector": "ours", "ironic": "Ironic's", "upstream": "imported"}
"""A run's ``source`` as the page names it."""

FACT_UNITS = {"memory_mb": "mib", "local_gb": "gib"}
"""Facts of the fleet view written with a unit."""

FIELD_UNITS = {
    "size": "bytes",
    "total_mb": "mib",
    "speed_mbps": "mbps",
}
"""Fields of a record's components written with a unit (a disk's size,
the memory's total, a NIC's speed)."""

HIDDEN_FIELDS = frozenset({"vlans"})
"""Fields too long for a line; shown apart where they matter."""


def when(value: Any) -> str:
    """An ISO time (naive: UTC) as ``2026-01-01 12:34:56 UTC``."""
    if value is None or value == "":
        return ""
    if isinstance(value, datetime.datetime):
        moment = value
    else:
        try:
            moment = datetime.datetime.fromisoformat(str(value))
        except ValueError:
            return str(value)
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.UTC).replace(tzinfo=None)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _number(value: float) -> str:
    """Up to three significant digits, no trailing zeros (``1.92``, ``446``)."""
    if value >= 100:
        return f"{value:.0f}"
    text = f"{value:.2f}" if value < 10 else f"{value:.1f}"
    return text.rstrip("0").rstrip(".")


def size(value: Any, unit: str) -> str:
    """``value`` in ``unit`` (``mib``, ``gib``, ``bytes``, ``mbps``) as an
    operator reads it; anything not a number as it is."""
    if value is None:
        return ""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return str(value)
    if unit == "mib":
        return f"{_number(value / 1024)} GiB"
    if unit == "gib":
        return f"{_number(value)} GiB"
    if unit == "mbps":
        if value >= 1000:
            return f"{_number(value / 1000)} Gb/s"
        return f"{value} Mb/s"
    if unit == "bytes":  # disks are sold in powers of ten
        for scale, name in ((10**12, "TB"), (10**9, "GB"), (10**6, "MB")):
            if value >= scale:
                return f"{_number(value / scale)} {name}"
        return f"{value} B"
    return str(value)


def fact(value: Any, name: str) -> str:
    """The value of fact ``name`` of the fleet view, with its unit."""
    if value is None:
        return ""
    if name in FACT_UNITS:
        return size(value, FACT_UNITS[name])
    if name == "finished_at":
        return when(value)
    return str(value)


def field(value: Any, name: str | None) -> str:
    """One field of a component (``size``, ``speed_mbps``...) as text."""
    if value is None:
        return ""
    if name in FIELD_UNITS:
        return size(value, FIELD_UNITS[name])
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return fields(value)
    return str(value)


def fields(component: Any) -> str:
    """A whole component (``{"name": "/dev/sdb", "size": ...}``) as
    ``name /dev/sdb, size 960 GB, ...``: the fields it has, not JSON."""
    if component is None:
        return ""
    if not isinstance(component, dict):
        return field(component, None)
    shown = [
        f"{key} {field(value, key)}"
        for key, value in component.items()
        if value not in (None, "", [], {}) and key not in HIDDEN_FIELDS
    ]
    return ", ".join(shown)


def source(run: dict[str, Any]) -> str:
    """Who made a run: ``ours``, ``Ironic's (agent)``, ``imported``."""
    name = SOURCES.get(run.get("source") or "inspector", run.get("source") or "")
    interface = run.get("interface")
    if run.get("source") == "ironic" and interface:
        return f"{name} ({interface})"
    return name


def register(add: Any) -> None:
    """Make these the filters of a blueprint (``add``: its
    ``app_template_filter``)."""
    add("when")(when)
    add("size")(size)
    add("fact")(fact)
    add("field")(field)
    add("fields")(fields)
    add("source")(source)
