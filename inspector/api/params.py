"""Parsing of request bodies and query parameters into clear 400s."""

import json
from typing import Any

import flask

from inspector import arguments, exceptions
from inspector.api import schemas

MAX_DEPTH = 32
"""Deepest nesting of objects and lists a body may have (an inventory: 5)."""
MAX_ITEMS = 100000
"""Longest list or largest object in a body (extra hardware data: ~5000)."""

_TRUE = {"1", "t", "true", "on", "y", "yes"}
_FALSE = {"0", "f", "false", "off", "n", "no"}


def json_object(*, required: bool = True) -> dict[str, Any] | None:
    """The request body as a JSON object (None when empty and not required)."""
    raw = flask.request.get_data(cache=False)
    if not raw.strip():
        if required:
            raise exceptions.InvalidInput(
                "A JSON object is required in the request body"
            )
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise exceptions.InvalidInput(
            f"The request body is not valid UTF-8 (byte {exc.start})"
        ) from None
    try:
        body = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise exceptions.InvalidInput(
            f"Invalid JSON in the request body: {exc}"
        ) from None
    if not isinstance(body, dict):
        raise exceptions.InvalidInput(
            f"The request body must be a JSON object, not {type(body).__name__}"
        )
    _check_size(body)
    return body


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_CONTAINERS = (dict, list)
"""A tuple, not ``dict | list``: that expression makes a union object at
each evaluation, here once per value of the body."""


def _check_size(body: Any) -> None:
    """Refuse bodies nested deeper than MAX_DEPTH or with huge containers."""
    stack: list[tuple[Any, int]] = [(body, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise exceptions.InvalidInput(
                f"The request body is nested deeper than {MAX_DEPTH} levels"
            )
        children = value.values() if isinstance(value, dict) else value
        if len(children) > MAX_ITEMS:
            raise exceptions.InvalidInput(
                f"The request body has a list or object of more than {MAX_ITEMS} items"
            )
        stack.extend((c, depth + 1) for c in children if isinstance(c, _CONTAINERS))


def strict_bool(name: str, default: bool) -> bool:
    value = flask.request.args.get(name)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise exceptions.InvalidInput(
        f"Invalid value for {name}: {value[:32]!r}, expected true or false"
    )


def limit(maximum: int) -> int:
    """The ``limit`` query parameter (:data:`schemas.LIMIT`) as
    :func:`inspector.arguments.limit` reads it."""
    return arguments.limit(flask.request.args.get(schemas.LIMIT.name), maximum)


def body(schema: schemas.Body) -> dict[str, Any]:
    """The request body, a JSON object that ``schema`` accepts."""
    found = json_object()
    assert found is not None  # required
    schema.check(found)
    return found
