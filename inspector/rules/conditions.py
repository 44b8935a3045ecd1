"""Rule conditions (entry points ``ironic_inspector.rules.conditions``).

A condition compares one value found in the data or the node with its
parameters. The engine resolves the field, applies ``multiple`` and
``invert``; a plugin only answers for one value.
"""

import abc
import functools
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

    def prepare(self, params: dict[str, Any]) -> dict[str, Any]:
        """The parameters with what ``check`` reuses made once (a compiled
        regular expression), when the rule is compiled."""
        return params

    @abc.abstractmethod
    def check(self, value: Any, params: dict[str, Any]) -> bool:
        """Whether ``value`` satisfies the condition."""


PREPARED = "_prepared"
"""The key under which ``prepare`` keeps its work in the parameters."""


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

    def prepare(self, params: dict[str, Any]) -> dict[str, Any]:
        try:
            return {**params, PREPARED: _network(params["value"])}
        except (netaddr.AddrFormatError, ValueError, TypeError, KeyError):
            return params  # a variable: read at run time

    def check(self, value: Any, params: dict[str, Any]) -> bool:
        network = params.get(PREPARED)
        if network is None:
            try:
                network = _network(params["value"])
            except (netaddr.AddrFormatError, ValueError, TypeError) as exc:
                raise ValueError(
                    f"{params['value']!r} is not a network: {exc}"
                ) from None
        address = _address(value) if isinstance(value, str) else None
        if address is None:
            return False
        version, first, last = network
        return address[0] == version and first <= address[1] <= last


def _network(text: Any) -> tuple[int, int, int]:
    """(IP version, first, last address) of a CIDR, as numbers."""
    network = netaddr.IPNetwork(text)
    return network.version, network.first, network.last


@functools.lru_cache(maxsize=4096)
def _address(text: str) -> tuple[int, int] | None:
    """(IP version, number) of an address; None when it is not one. Kept:
    a node's few addresses meet every in-net rule."""
    try:
        address = netaddr.IPAddress(text)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return None
    return address.version, int(address)


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

    def prepare(self, params: dict[str, Any]) -> dict[str, Any]:
        try:
            return {**params, PREPARED: re.compile(params["value"])}
        except (re.error, TypeError, KeyError):
            return params

    @staticmethod
    def pattern(params: dict[str, Any]) -> "re.Pattern[str]":
        found = params.get(PREPARED)
        if found is not None:
            return found
        try:
            return re.compile(str(params["value"]))
        except re.error as exc:
            raise ValueError(
                f"{params['value']!r} is not a regular expression: {exc}"
            ) from None


class Matches(_Regex):
    """The whole field matches the regular expression."""

    def check(self, value: Any, params: dict[str, Any]) -> bool:
        if value is None:
            return False
        return self.pattern(params).fullmatch(str(value)) is not None


class Contains(_Regex):
    """The regular expression is found somewhere in the field."""

    def check(self, value: Any, params: dict[str, Any]) -> bool:
        if value is None:
            return False
        return self.pattern(params).search(str(value)) is not None


class IsEmpty(Condition):
    """The field is missing, null, or an empty string, list or object."""

    PARAMS = {"type": "object", "properties": {}}
    ALLOW_NONE = True

    def check(self, value: Any, params: dict[str, Any]) -> bool:
        return value is None or value in ("", [], {})


class OneOf(Condition):
    """The field equals one of ``values`` (compared as ``eq`` compares)."""

    PARAMS = {
        "type": "object",
        "properties": {"values": {"type": "array"}},
        "required": ["values"],
    }

    def check(self, value: Any, params: dict[str, Any]) -> bool:
        if value is None:
            return False
        for expected in params["values"]:
            try:
                left, right = _coerce(value, expected)
            except (TypeError, ValueError):
                continue
            if left == right:
                return True
        return False


class IsNone(Condition):
    """The field is missing or null."""

    PARAMS = {"type": "object", "properties": {}}
    ALLOW_NONE = True

    def check(self, value: Any, params: dict[str, Any]) -> bool:
        return value is None


_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


class IsTrue(Condition):
    """The field is true: a true boolean, a number other than 0, or the text
    true, yes, on or 1 (any case)."""

    PARAMS = {"type": "object", "properties": {}}

    def check(self, value: Any, params: dict[str, Any]) -> bool:
        if isinstance(value, bool | int | float):
            return bool(value)
        if isinstance(value, str):
            return value.strip().lower() in _TRUE
        return False


class IsFalse(Condition):
    """The field is false: a false boolean, 0, the text false, no, off or 0
    (any case), or missing or null (as Ironic judges it)."""

    PARAMS = {"type": "object", "properties": {}}
    ALLOW_NONE = True

    def check(self, value: Any, params: dict[str, Any]) -> bool:
        if value is None:
            return True
        if isinstance(value, bool | int | float):
            return not value
        if isinstance(value, str):
            return value.strip().lower() in _FALSE
        return False
