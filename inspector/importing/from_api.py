"""Reading an ironic-inspector 12.x deployment through its API, where its
database cannot be reached: statuses (``GET /v1/introspection``, paged),
stored data (``.../data`` and, at 1.17, ``.../data/unprocessed``) and
rules (``GET /v1/rules`` then each rule). The API shows no lookup
attributes, options or ``manage_boot``: a node 12.x waits for cannot be
looked up here after such an import (:mod:`.plan` says so)."""

import datetime
from typing import Any

import requests

from inspector import exceptions
from inspector.importing.source import Upstream, UpstreamNode

VERSION = {"X-OpenStack-Ironic-Inspector-API-Version": "1.18"}
PAGE = 1000
TIMEOUT = 60


class Reader:
    """GETs against 12.x's API at ``url`` (``token``: keystone's)."""

    def __init__(self, url: str, token: str | None = None) -> None:
        self.url = url.rstrip("/")
        self.http = requests.Session()
        self.http.headers.update(VERSION)
        if token:
            self.http.headers["X-Auth-Token"] = token

    def get(self, path: str, missing_ok: bool = False) -> Any:
        """The JSON of ``path``; None for a 404 when ``missing_ok``.

        :raises InvalidInput: 12.x cannot be reached or refuses.
        """
        try:
            resp = self.http.get(self.url + path, timeout=TIMEOUT)
        except requests.RequestException as exc:
            raise exceptions.InvalidInput(
                f"ironic-inspector at {self.url} cannot be reached: {exc}"
            ) from None
        if resp.status_code == 404 and missing_ok:
            return None
        if resp.status_code in (401, 403):
            raise exceptions.InvalidInput(
                f"ironic-inspector at {self.url} refused GET {path} "
                f"(HTTP {resp.status_code}): give an admin's token with --token"
            )
        if resp.status_code != 200:
            raise exceptions.InvalidInput(
                f"ironic-inspector at {self.url} answered GET {path} with HTTP "
                f"{resp.status_code}: {resp.text[:200]}"
            )
        try:
            return resp.json()
        except ValueError:
            raise exceptions.InvalidInput(
                f"ironic-inspector at {self.url} answered GET {path} with "
                "something that is not JSON"
            ) from None


def _time(value: Any) -> datetime.datetime | None:
    if not value:
        return None
    when = datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if when.tzinfo is not None:
        when = when.astimezone(datetime.UTC).replace(tzinfo=None)
    return when


def read(url: str, token: str | None = None) -> Upstream:
    """Everything 12.x's API at ``url`` shows.

    :raises InvalidInput: it cannot be reached, refuses, or answers
        something else than 12.x would.
    """
    reader = Reader(url, token)
    found = Upstream(where=reader.url, through_api=True)
    marker = None
    while True:
        query = f"/v1/introspection?limit={PAGE}" + (
            f"&marker={marker}" if marker else ""
        )
        page = (reader.get(query) or {}).get("introspection") or []
        for status in page:
            found.nodes.append(_node(reader, status))
        if len(page) < PAGE:
            break
        marker = page[-1]["uuid"]
    listed = (reader.get("/v1/rules") or {}).get("rules") or []
    for item in listed:
        rule = reader.get(f"/v1/rules/{item['uuid']}")
        found.rules.append(
            {
                "uuid": rule["uuid"],
                "created_at": None,
                "description": rule.get("description"),
                "disabled": bool(rule.get("disabled", False)),
                "scope": rule.get("scope"),
                "conditions": rule.get("conditions") or [],
                "actions": rule.get("actions") or [],
            }
        )
    return found


def _node(reader: Reader, status: dict[str, Any]) -> UpstreamNode:
    uuid = str(status["uuid"])
    node = UpstreamNode(
        uuid=uuid,
        state=str(
            status.get("state") or ("finished" if status.get("finished") else "")
        ),
        started_at=_time(status.get("started_at")),
        finished_at=_time(status.get("finished_at")),
        error=status.get("error"),
        manage_boot=True,
    )
    if node.state in ("finished", "error"):
        node.processed = reader.get(f"/v1/introspection/{uuid}/data", missing_ok=True)
        node.unprocessed = reader.get(
            f"/v1/introspection/{uuid}/data/unprocessed", missing_ok=True
        )
        node.data_known = False  # a 404: none stored, or a store it cannot read
    return node
