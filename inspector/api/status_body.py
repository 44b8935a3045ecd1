"""The JSON body of one introspection's status.

Every field at every microversion, as ironic-inspector answers: its stock
client asks for 1.0 unless told otherwise and still shows ``state`` and the
timestamps (added in 1.10 and 1.7).
"""

from typing import Any

from inspector import states
from inspector.api import versions
from inspector.db.introspections import IntrospectionRecord


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


PENDING_SINCE = versions.since("pending_ironic_sync")
"""``pending_ironic_sync`` (ours) is in the status from this version on."""
OWNER_SINCE = versions.since("owner")
"""``owner`` and ``owner_since`` (ours) are in the status from this version on."""
MODE_SINCE = versions.since("mode")
"""``mode`` (ours, doc/redfish.md) is in the status from this version on."""


def status_body(
    record: IntrospectionRecord, base_url: str, version: tuple[int, int] = (1, 0)
) -> dict[str, Any]:
    body = {
        "uuid": record.uuid,
        "finished": record.finished,
        "state": record.state,
        "started_at": _iso(record.started_at),
        "finished_at": _iso(record.finished_at),
        "error": record.error,
        "links": [
            {"href": f"{base_url}/v1/introspection/{record.uuid}", "rel": "self"}
        ],
    }
    if version >= PENDING_SINCE:
        # finished, but Ironic has not taken every result yet
        body["pending_ironic_sync"] = record.owed_writes is not None
        body["pending_ironic_sync_reason"] = record.owed_reason
    if version >= OWNER_SINCE:
        # who does the current step, since when: a step whose conductor died
        # shows its dead owner here until the leader takes it over
        body["owner"] = record.owner
        body["owner_since"] = _iso(record.claimed_at)
    if version >= MODE_SINCE:
        body["mode"] = record.mode or states.IN_BAND
    return body
