"""Rule conditions (entry points ``ironic_inspector.rules.conditions``).

A condition compares one value found in the data or the node with its
parameters. The engine resolves the field, applies ``multiple`` and
``invert``; a plugin only answers for one value.
"""

import abc
import operator
import re
from typing import Any

import netaddr


class Condition(abc.ABC):
    """One comparison; ``PARAMS`` is the JSON schema of its parameters."""

    PARAMS: dict[str, Any] = {
        "type": "object",
        "properties": {"value": {}},
        "required": ["value"],
    }
    ALLOW_NONE = False
    """Whether a field missing from the data is checked (as None) instead of
    making the rule not match."""

    def validate(self, params: dict[str, Any]) -> None:
        """Check parameters beyond the schema; raise ValueError naming them."""

    @abc.abstractmethod
    def check(self, value: Any, params: dict[str, Any]) -> bool:
        """Whether ``value`` satisfies the condition."""


def _coerce(value: Any, expected: Any) -> tuple[Any, Any]:
    """Both sides as one comparable type, led by the field's own type.

    Numbers compare as numbers ("4096" equals 4096 either way round; a
    string that is not a number never matches a number), booleans accept
    true/false in any case, strings compare as strings.

    :raises ValueError: when the parameter cannot be read as that type.
    """
    if isinstance(value, bool):
        if isinstance(expected, bool):
            return value, expected
        text = str(expected).strip().lower()
        if text not in ("true", "false"):
            raise ValueError(expected)
        return value, text == "true"
    if isinstance(value, int | float):
        if isinstance(expected, bool):
            raise ValueError(expected)
        return float(value), float(expected)
    if isinstance(value, str):
        if isinstance(expected, int | float) and not isinstance(expected, bool):
            return float(value), float(expected)  # "4096" from a ramdisk
        return value, expected if isinstance(expected, str) else str(expected)
    return value, expected


class _Compare(Condition):
    """The parameter is read as the field's type, then compared."""

    op: Any = operator.eq  # a function of (field value, parameter)

    def check(self, value: Any, params: dict[str, Any]) -> bool:
        if value is None:
            return False
        try:
            left, right = _coerce(value, params["value"])
            return bool(type(self).op(left, right))
        except (TypeError, ValueError):
            return False


class Eq(_Compare):
    op = operator.eq


class Ne(_Compare):
    op = operator.ne


class Lt(_Compare):
    op = operator.lt


class Le(_Compare):
    op = operator.le


class Gt(_Compare):
    op = operator.gt


class Ge(_Compare):
    op = operator.ge


class InNet(Condition):
    """The field is an IP address inside the ``value`` network (CIDR)."""

    PARAMS = {
        "type": "object",
        "properties": {"value": {"type": "string"}},
        "required": ["value"],
    }

    def validate(self, params: dict[str, Any]) -> None:
        try:
            netaddr.IPNetwork(params["value"])
        except (netaddr.AddrFormatError, ValueError) as exc:
            raise ValueError(f"value is not a network (CIDR): {exc}") from exc

    def check(self, value: Any, params: dict[str, Any]) -> bool:
        try:
            return netaddr.IPAddress(str(value)) in netaddr.IPNetwork(params["value"])
        except (netaddr.AddrFormatError, ValueError, TypeError):
            return False


class _Regex(Condition):
    PARAMS = {
        "type": "object",
        "properties": {"value": {"type": "string"}},
        "required": ["value"],
    }

    def validate(self, params: dict[str, Any]) -> None:
        try:
            re.compile(params["value"])
        except re.error as exc:
            raise ValueError(f"value is not a regular expression: {exc}") from exc


class Matches(_Regex):
    """The whole field matches the regular expression."""

    def check(self, value: Any, params: dict[str, Any]) -> bool:
        if value is None:
            return False
        return re.fullmatch(params["value"], str(value)) is not None


class Contains(_Regex):
    """The regular expression is found somewhere in the field."""

    def check(self, value: Any, params: dict[str, Any]) -> bool:
        if value is None:
            return False
        return re.search(params["value"], str(value)) is not None


class IsEmpty(Condition):
    """The field is missing, null, or an empty string, list or object."""

    PARAMS = {"type": "object", "properties": {}}
    ALLOW_NONE = True

    def check(self, value: Any, params: dict[str, Any]) -> bool:
        return value is None or value in ("", [], {})
