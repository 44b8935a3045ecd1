"""A lean path for the hottest request: a status GET that succeeds.

Clients and scripts poll ``GET /v1/introspection/<uuid>`` in loops; in one
Python process the framework's per-request work is a third of its cost.
This WSGI middleware answers exactly that request (a UUID, no query
string, a valid or absent version header, a record that exists) with the
same body and headers the Flask route gives, and hands every other
request, including every error, to the Flask app unchanged.
"""

import functools
import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from inspector.api import access, urls, versions
from inspector.api.status_body import status_body
from inspector.db import introspections
from inspector.runtime import Runtime

_PATH_RE = re.compile(
    r"^/v1/introspection/([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
    r"[0-9a-fA-F]{4}-[0-9a-fA-F]{12})/?$"
)
_LEGACY_KEY = "HTTP_" + versions.HEADER.upper().replace("-", "_")
_STANDARD_KEY = "HTTP_" + versions.STANDARD_HEADER.upper().replace("-", "_")

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

_ENCODER = json.JSONEncoder(separators=(",", ":"))
"""Compact, as Flask's JSON provider writes; ``json.dumps`` with separators
would build a new encoder for every request."""


def encode(body: dict[str, Any]) -> bytes:
    """The same bytes Flask's JSON provider writes (compact, newline)."""
    return (_ENCODER.encode(body) + "\n").encode()


@functools.cache
def _version_headers(version: versions.Version) -> tuple[tuple[str, str], ...]:
    # a few versions are asked for; every request of one gets the same
    return (*versions.response_headers(version).items(), ("Vary", versions.VARY))


def headers(version: versions.Version, length: int) -> list[tuple[str, str]]:
    """The answer's headers, as the Flask route gives them."""
    return [
        ("Content-Type", "application/json"),
        ("Content-Length", str(length)),
        *_version_headers(version),
    ]


class StatusFastPath:
    def __init__(self, app: WSGIApp, rt: Runtime) -> None:
        self._app = app
        self._rt = rt

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") != "GET" or environ.get("QUERY_STRING"):
            return self._app(environ, start_response)
        match = _PATH_RE.match(environ.get("PATH_INFO", ""))
        if match is None or not access.allowed(
            self._rt.conf, "introspection:status", environ
        ):  # a denied caller gets its 403 from the Flask app
            return self._app(environ, start_response)
        try:
            version = versions.negotiate(
                environ.get(_LEGACY_KEY), environ.get(_STANDARD_KEY)
            )
            record = introspections.get(self._rt.db, match.group(1).lower())
        except Exception:  # noqa: BLE001 - every error answers through Flask
            return self._app(environ, start_response)  # the one error path
        data = encode(status_body(record, urls.base_url(environ), version))
        start_response("200 OK", headers(version, len(data)))
        return [data]
