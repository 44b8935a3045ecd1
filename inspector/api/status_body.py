"""The JSON body of one introspection's status, per API version."""

from typing import Any

from inspector.api.versions import Version
from inspector.db.introspections import Introspection


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def status_body(
    record: Introspection, version: Version, base_url: str
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "uuid": record.uuid,
        "finished": record.finished,
        "error": record.error,
        "links": [
            {"href": f"{base_url}/v1/introspection/{record.uuid}", "rel": "self"}
        ],
    }
    if version >= (1, 7):
        body["started_at"] = _iso(record.started_at)
        body["finished_at"] = _iso(record.finished_at)
    if version >= (1, 10):
        body["state"] = record.state
    return body
