"""Condition fields as JSONPaths, compiled once into plain lookups.

jsonpath_ng's ``find`` costs tens of microseconds a call; with hundreds
of rules per node that is most of their cost. The paths rules use are
plain (``inventory.cpu.count``, ``interfaces[*].ipv4_address``,
``disks[0].size``): those become a list of steps walked over dicts and
lists, giving what jsonpath_ng finds (a unit test compares them). Any
other path (filters, slices, unions) keeps jsonpath_ng.
"""

from collections.abc import Callable
from typing import Any

import jsonpath_ng
from jsonpath_ng import jsonpath

Finder = Callable[[Any], list[Any]]

_KEY, _INDEX, _ALL = 0, 1, 2


def _steps(node: Any) -> list[tuple[int, Any]] | None:
    if isinstance(node, jsonpath.Root | jsonpath.This):
        return []
    if isinstance(node, jsonpath.Child):
        left, right = _steps(node.left), _steps(node.right)
        if left is None or right is None:
            return None
        return left + right
    if isinstance(node, jsonpath.Fields) and len(node.fields) == 1:
        name = node.fields[0]
        if name in ("*", "@"):
            return None
        return [(_KEY, name)]
    if isinstance(node, jsonpath.Index) and len(node.indices) == 1:
        return [(_INDEX, node.indices[0])]
    if isinstance(node, jsonpath.Wildcard):
        return [(_ALL, None)]
    return None


def _walk(steps: list[tuple[int, Any]], source: Any) -> list[Any]:
    found = [source]
    for kind, arg in steps:
        following = []
        for value in found:
            if kind == _KEY:
                if isinstance(value, dict) and arg in value:
                    following.append(value[arg])
            elif kind == _INDEX:
                if isinstance(value, list) and -len(value) <= arg < len(value):
                    following.append(value[arg])
            elif isinstance(value, dict):
                following.extend(value.values())
            elif isinstance(value, list):
                following.extend(value)
        if not following:
            return []
        found = following
    return found


def finder(parsed: Any) -> Finder:
    """A function giving the values ``parsed`` (a jsonpath_ng path) finds."""
    steps = _steps(parsed)
    if steps is None:
        return lambda source: [match.value for match in parsed.find(source)]
    if not steps:
        return lambda source: [source]
    if all(kind == _KEY for kind, _ in steps):
        keys = [key for _, key in steps]
        return lambda source: _keys(keys, source)
    return lambda source: _walk(steps, source)


def _keys(keys: list[Any], source: Any) -> list[Any]:
    """The common case: object keys only."""
    value = source
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return []
        value = value[key]
    return [value]


def parse(text: str) -> Finder:
    return finder(jsonpath_ng.parse(text))
