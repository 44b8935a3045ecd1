"""A page's limit, comma-separated names and FACT=VALUE filters, parsed
one way for the API, the manage CLI and the OpenStackClient commands."""

import pytest

from inspector import arguments, exceptions


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (None, 1000),
        (0, 1000),
        ("0", 1000),
        (1, 1),
        ("25", 25),
        (" 7 ", 7),
        (1000, 1000),
    ],
)
def test_limit(given: str | int | None, expected: int) -> None:
    assert arguments.limit(given, 1000) == expected


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("ten", "Invalid value for limit: 'ten', expected an integer"),
        ("x" * 40, f"Invalid value for limit: {'x' * 32!r}, expected an integer"),
        ("-1", "Invalid value for limit: -1, it must not be negative"),
        (-5, "Invalid value for limit: -5, it must not be negative"),
        ("1001", "Invalid value for limit: 1001, the maximum is 1000"),
    ],
)
def test_limit_refused(given: str | int, message: str) -> None:
    with pytest.raises(exceptions.InvalidInput) as caught:
        arguments.limit(given, 1000)
    assert caught.value.message == message


def test_limit_names_the_option() -> None:
    with pytest.raises(exceptions.InvalidInput, match="^Invalid value for --limit: -1"):
        arguments.limit(-1, 10, name="--limit")


def test_names() -> None:
    assert arguments.names(" a, b,,c ,") == ["a", "b", "c"]
    assert arguments.names("") == []


def test_fact_filters() -> None:
    assert arguments.fact_filters(
        [" product =X", "memory_mb=1024", "name=a=b", "cpus="]
    ) == {"product": "X", "memory_mb": "1024", "name": "a=b", "cpus": ""}
    assert arguments.fact_filters([]) == {}


@pytest.mark.parametrize("item", ["product", "=value", " =value"])
def test_fact_filters_refused(item: str) -> None:
    with pytest.raises(exceptions.InvalidInput) as caught:
        arguments.fact_filters([item])
    assert caught.value.message == f"--filter {item!r}: expected FACT=VALUE"
