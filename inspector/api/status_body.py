"""The JSON body of one introspection's status.

Every field at every microversion, as ironic-inspector answers: its stock
client asks for 1.0 unless told otherwise and still shows ``state`` and the
timestamps (added in 1.10 and 1.7).
"""

from typing import Any

from inspector.db.introspections import Introspection


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def status_body(record: Introspection, base_url: str) -> dict[str, Any]:
    return {
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
