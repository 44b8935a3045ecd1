"""The JSON-RPC 2.0 subset spoken between the API and the conductors.

A request is one object (no batches): ``{"jsonrpc": "2.0", "method": M,
"params": {...}, "id": N}``, params by name. A request without ``id`` is a
notification: it runs the same way and is answered 204 with no body. Every
problem is a JSON-RPC error object; the HTTP status says the same thing for
clients and proxies that only look at it.
"""

import dataclasses
import json
from typing import Any

VERSION = "2.0"

MAX_DEPTH = 8
"""Deepest nesting of objects and arrays accepted; a call needs 3."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNAVAILABLE = -32000
"""Implementation-defined: the conductor cannot take work right now (its
database or coordination backend is away); another conductor may."""
UNAUTHORIZED = -32001
FORBIDDEN = -32003

HTTP_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    METHOD_NOT_FOUND: 404,
    INVALID_PARAMS: 400,
    INTERNAL_ERROR: 500,
    UNAVAILABLE: 503,
    UNAUTHORIZED: 401,
    FORBIDDEN: 403,
}


class RpcError(Exception):
    """A JSON-RPC error: ``code`` and a message for the caller."""

    def __init__(self, code: int, message: str, request_id: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id

    @property
    def http_status(self) -> int:
        return HTTP_STATUS.get(self.code, 500)


@dataclasses.dataclass(frozen=True)
class Request:
    method: str
    params: dict[str, Any]
    request_id: Any
    """None for a notification."""

    @property
    def is_notification(self) -> bool:
        return self.request_id is None


def depth(body: bytes) -> int:
    """How deeply ``body`` (JSON text) nests objects and arrays, found by a
    scan that skips strings: checked before parsing, so a hostile body never
    reaches the parser's recursion."""
    deepest = level = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # closing quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            level += 1
            deepest = max(deepest, level)
        elif byte in (0x5D, 0x7D):  # ] }
            level -= 1
    return deepest


def parse(body: bytes) -> Request:
    """The request in ``body``.

    :raises RpcError: not JSON, too deep, or not a JSON-RPC 2.0 request.
    """
    if depth(body) > MAX_DEPTH:
        raise RpcError(
            INVALID_REQUEST, f"the request nests deeper than {MAX_DEPTH} levels"
        )
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise RpcError(PARSE_ERROR, f"the body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise RpcError(INVALID_REQUEST, "a request is one JSON object (no batches)")
    request_id = data.get("id")
    if request_id is not None and (
        isinstance(request_id, bool) or not isinstance(request_id, str | int)
    ):
        raise RpcError(INVALID_REQUEST, "id must be a string or an integer")
    if data.get("jsonrpc") != VERSION:
        raise RpcError(INVALID_REQUEST, 'jsonrpc must be "2.0"', request_id)
    method = data.get("method")
    if not isinstance(method, str) or not method:
        raise RpcError(INVALID_REQUEST, "method must be a string", request_id)
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params must be an object (by name)", request_id)
    return Request(method, params, request_id)


def request(method: str, params: dict[str, Any], request_id: int) -> bytes:
    return json.dumps(
        {"jsonrpc": VERSION, "method": method, "params": params, "id": request_id}
    ).encode()


def result(request_id: Any, value: Any) -> bytes:
    return json.dumps({"jsonrpc": VERSION, "result": value, "id": request_id}).encode()


def error(exc: RpcError) -> bytes:
    return json.dumps(
        {
            "jsonrpc": VERSION,
            "error": {"code": exc.code, "message": exc.message},
            "id": exc.request_id,
        }
    ).encode()
