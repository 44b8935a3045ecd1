"""The fleet page's tables, sorted and paged on the server: which column
and page a request asks for (``sort=memory_mb``, ``sort=-memory_mb``,
``page=3``), that page of the rows, and the links to other orders and
pages as relative query strings (no JavaScript, any path prefix)."""

import dataclasses
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from inspector import exceptions

ROWS = 50
"""Rows per page of a table."""
MAX_PAGE = 100_000
"""Beyond any fleet's pages: a larger number is a mistake, said so."""


@dataclasses.dataclass(frozen=True)
class Order:
    """How a table is sorted: a column, ascending or not."""

    column: str
    descending: bool = False

    @property
    def param(self) -> str:
        return f"-{self.column}" if self.descending else self.column


def order(args: Mapping[str, str], columns: Sequence[str], default: Order) -> Order:
    """The ``sort`` the request asks for, one of ``columns``.

    :raises InvalidInput: a column the table does not have.
    """
    text = args.get("sort")
    if not text:
        return default
    descending = text.startswith("-")
    column = text[1:] if descending else text
    if column not in columns:
        raise exceptions.InvalidInput(
            f"Cannot sort by {text[:64]!r}: sort by one of {', '.join(columns)} "
            "(a leading '-' for descending)"
        )
    return Order(column, descending)


def page_number(args: Mapping[str, str]) -> int:
    """The ``page`` the request asks for (1 when none).

    :raises InvalidInput: not a whole number from 1.
    """
    text = args.get("page")
    if text is None or text == "":
        return 1
    try:
        number = int(text)
    except ValueError:
        number = 0
    if not 1 <= number <= MAX_PAGE:
        raise exceptions.InvalidInput(
            f"Invalid page {text[:32]!r}: pages are numbered from 1"
        )
    return number


def sort(
    rows: Sequence[Any], how: Order, value: Callable[[Any, str], Any]
) -> list[Any]:
    """``rows`` by ``value(row, column)``, the rows without a value last
    either way; rows of equal values keep their order (by UUID)."""
    present = [r for r in rows if value(r, how.column) is not None]
    absent = [r for r in rows if value(r, how.column) is None]
    try:
        present.sort(key=lambda r: value(r, how.column), reverse=how.descending)
    except TypeError:  # mixed kinds of value: as text
        present.sort(key=lambda r: str(value(r, how.column)), reverse=how.descending)
    return present + absent


@dataclasses.dataclass(frozen=True)
class Page:
    """One page of a table's rows."""

    rows: list[Any]
    number: int
    pages: int
    total: int

    @property
    def first(self) -> int:
        """The position of its first row (from 1; 0 when empty)."""
        return (self.number - 1) * ROWS + 1 if self.rows else 0

    @property
    def last(self) -> int:
        return self.first + len(self.rows) - 1 if self.rows else 0


def page(rows: Sequence[Any], number: int) -> Page:
    """Page ``number`` of ``rows``.

    :raises InvalidInput: past the last page.
    """
    pages = max((len(rows) + ROWS - 1) // ROWS, 1)
    if number > pages:
        raise exceptions.InvalidInput(
            f"Invalid page {number}: there {'is' if pages == 1 else 'are'} "
            f"{pages} page{'' if pages == 1 else 's'} of {len(rows)} rows"
        )
    start = (number - 1) * ROWS
    return Page(list(rows[start : start + ROWS]), number, pages, len(rows))


def link(args: Mapping[str, str], **changes: Any) -> str:
    """A relative link to this page with ``changes`` to its query (None
    removes a parameter): ``?product=R650&sort=-memory_mb``. Sorting or
    filtering again starts at the first page."""
    query = {k: v for k, v in args.items() if k != "page" or "page" in changes}
    for key, value in changes.items():
        if value is None:
            query.pop(key, None)
        else:
            query[key] = str(value)
    if query.get("page") == "1":
        del query["page"]
    return "?" + urllib.parse.urlencode(query)


def header(args: Mapping[str, str], how: Order, column: str) -> tuple[str, str]:
    """The link of a column's header (sort by it; again: the other way)
    and its mark (``▲``/``▼`` on the sorted column)."""
    if how.column == column:
        flipped = Order(column, not how.descending)
        return link(args, sort=flipped.param), "▼" if how.descending else "▲"
    return link(args, sort=column), ""
