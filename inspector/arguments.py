"""What a client gives in a query string or on a command line, parsed one
way for the API, ``ironic-inspector-manage`` and the OpenStackClient
commands: a page's size, a comma-separated list of names and ``FACT=VALUE``
filters. In the kernel because the OpenStackClient plugin, which may import
nothing else of the service, parses filters too."""

from collections.abc import Iterable

from inspector import exceptions


def limit(value: str | int | None, maximum: int, *, name: str = "limit") -> int:
    """The size of a page: ``value`` (a query's text or a command's
    integer); absent or 0 means ``maximum`` (``[DEFAULT]api_max_limit``).

    :raises InvalidInput: not an integer, negative, or above ``maximum``.
    """
    if value is None:
        return maximum
    if isinstance(value, str):
        try:
            number = int(value)
        except ValueError:
            raise exceptions.InvalidInput(
                f"Invalid value for {name}: {value[:32]!r}, expected an integer"
            ) from None
    else:
        number = value
    if number == 0:
        return maximum
    if number < 0:
        raise exceptions.InvalidInput(
            f"Invalid value for {name}: {number}, it must not be negative"
        )
    if number > maximum:
        raise exceptions.InvalidInput(
            f"Invalid value for {name}: {number}, the maximum is {maximum}"
        )
    return number


def names(text: str) -> list[str]:
    """``a, b,,c`` as ``["a", "b", "c"]``: a comma-separated list, each
    name stripped, the empty ones dropped."""
    return [name.strip() for name in text.split(",") if name.strip()]


def fact_filters(items: Iterable[str], *, option: str = "--filter") -> dict[str, str]:
    """``FACT=VALUE`` arguments as the fleet view's filters (the value as
    given; the fact stripped). The fleet view judges the facts and values.

    :raises InvalidInput: an argument without ``=`` or without a fact.
    """
    filters = {}
    for item in items:
        fact, sep, value = item.partition("=")
        if not sep or not fact.strip():
            raise exceptions.InvalidInput(f"{option} {item!r}: expected FACT=VALUE")
        filters[fact.strip()] = value
    return filters
