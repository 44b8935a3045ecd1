"""Each condition plugin on the values ramdisk data really has."""

from typing import Any

import pytest

from inspector.rules import conditions as c


@pytest.mark.parametrize(
    "plugin,value,param,expected",
    [
        (c.Eq(), 4096, 4096, True),
        (c.Eq(), 4096, "4096", True),  # the parameter is read as the field's type
        (c.Eq(), 4096.0, 4096, True),
        (c.Eq(), "x86_64", "x86_64", True),
        (c.Eq(), "x86_64", "aarch64", False),
        (c.Eq(), True, "true", True),
        (c.Eq(), False, "TRUE", False),
        (c.Eq(), True, "yes please", False),  # not a boolean: no match, no error
        (c.Eq(), 8, "eight", False),
        (c.Eq(), None, 1, False),
        (c.Ne(), 4, 8, True),
        (c.Ne(), 8, 8, False),
        (c.Lt(), 2048, 4096, True),
        (c.Lt(), 4096, "4096", False),
        (c.Le(), 4096, 4096, True),
        (c.Gt(), 64, "32", True),
        (c.Gt(), "abc", 3, False),  # not a number: no match
        (c.Gt(), "64", 32, True),  # numbers sent as strings
        (c.Eq(), "abc", "abc", True),
        (c.Ge(), 32, 32, True),
        (c.Ge(), [1], 1, False),  # incomparable types never raise
    ],
)
def test_comparisons(
    plugin: c.Condition, value: Any, param: Any, expected: bool
) -> None:
    assert plugin.check(value, {"value": param}) is expected


@pytest.mark.parametrize(
    "value,expected",
    [
        ("192.168.1.10", True),
        ("10.0.0.1", False),
        ("not-an-ip", False),
        (None, False),
        ("fe80::1", False),
    ],
)
def test_in_net(value: Any, expected: bool) -> None:
    assert c.InNet().check(value, {"value": "192.168.1.0/24"}) is expected


def test_in_net_validates_the_network() -> None:
    with pytest.raises(ValueError, match="network"):
        c.InNet().validate({"value": "192.168.1.0/99"})


@pytest.mark.parametrize(
    "plugin,value,pattern,expected",
    [
        (c.Matches(), "Dell Inc.", r"Dell.*", True),
        (c.Matches(), "A Dell Inc.", r"Dell.*", False),  # the whole value
        (c.Contains(), "A Dell Inc.", r"Dell", True),
        (c.Contains(), "HPE", r"Dell", False),
        (c.Matches(), 42, r"4\d", True),  # numbers are matched as text
        (c.Contains(), None, r".*", False),
    ],
)
def test_regex(plugin: c.Condition, value: Any, pattern: str, expected: bool) -> None:
    assert plugin.check(value, {"value": pattern}) is expected


def test_regex_validates_the_pattern() -> None:
    with pytest.raises(ValueError, match="regular expression"):
        c.Matches().validate({"value": "("})


@pytest.mark.parametrize(
    "value,expected",
    [
        (None, True),
        ("", True),
        ([], True),
        ({}, True),
        ("x", False),
        ([0], False),
        (0, False),
        (False, False),
    ],
)
def test_is_empty(value: Any, expected: bool) -> None:
    assert c.IsEmpty().check(value, {}) is expected
    assert c.IsEmpty.ALLOW_NONE
