"""What changed between two hardware records of one node.

A record (:mod:`inspector.history.record`) is flattened into components:
``system``, ``cpu``, ``memory`` and ``bmc`` (always there), and
``dimm:<id>``, ``disk:<identity>``, ``nic:<mac>`` (as many as the
machine has). A component in one record only is ``removed`` or
``added``, with the whole component in ``before`` or ``after`` and
``field`` None; a component in both gives one ``changed`` per attribute
that differs. So a replaced disk (another serial) is one ``removed`` and
one ``added``, shrunk memory one ``changed`` ``total_mb``, a cable moved
to another switch port one ``changed`` ``nic:<mac>`` ``switch_port_id``.

The changes come in a stable order (the fixed components first, then by
kind and identity; attributes by name). The caller adds ``run`` and
``finished_at``. No I/O here.
"""

from typing import Any

from inspector.history.record import Record

SINGLE = ("system", "cpu", "memory", "bmc")
"""Components every record has, one of each."""
MANY = (("dimm", "dimms"), ("disk", "disks"), ("nic", "nics"))
"""Components by identity: the change's prefix and the record's key."""

Change = dict[str, Any]


def components(record: Record) -> dict[str, dict[str, Any]]:
    """``{"system": {...}, ..., "disk:S3EV...": {...}, ...}`` in order."""
    found: dict[str, dict[str, Any]] = {}
    for name in SINGLE:
        value = record.get(name)
        if isinstance(value, dict):
            found[name] = value
    for prefix, key in MANY:
        for identity, value in sorted((record.get(key) or {}).items()):
            found[f"{prefix}:{identity}"] = value
    return found


def _change(
    component: str, kind: str, field: str | None, before: Any, after: Any
) -> Change:
    return {
        "component": component,
        "kind": kind,
        "field": field,
        "before": before,
        "after": after,
    }


def changes(previous: Record | None, current: Record) -> list[Change]:
    """The changes from ``previous`` to ``current``; none on a first run
    (``previous`` None)."""
    if previous is None:
        return []
    before, after = components(previous), components(current)
    found: list[Change] = []
    for name, old in before.items():
        new = after.get(name)
        if new is None:
            found.append(_change(name, "removed", None, old, None))
            continue
        for field in sorted(set(old) | set(new)):
            if old.get(field) != new.get(field):
                found.append(
                    _change(name, "changed", field, old.get(field), new.get(field))
                )
    for name, new in after.items():
        if name not in before:
            found.append(_change(name, "added", None, None, new))
    return found


def changed_components(found: list[Change]) -> int:
    """How many components ``found`` touches (the history's ``changes``)."""
    return len({change["component"] for change in found})
