"""The kernel's errors: one line of an error for a log or a message."""

from inspector import exceptions


class _WithMessage(Exception):
    message = "the library's words"


def test_first_line_is_the_first_line_of_the_text() -> None:
    assert exceptions.first_line(RuntimeError("first\nsecond")) == "first"
    assert exceptions.first_line(RuntimeError("\n  first \nsecond")) == "first"


def test_first_line_prefers_a_message() -> None:
    error = exceptions.DatabaseUnavailable(reason="refused\nDETAIL: more")
    assert exceptions.first_line(error) == "The database is unreachable: refused"
    assert exceptions.first_line(_WithMessage("str\nof it")) == "the library's words"


def test_an_error_without_text_is_named_by_its_class() -> None:
    assert exceptions.first_line(ConnectionError()) == "ConnectionError"
    assert exceptions.first_line(ConnectionError(""), "") == ""
    assert exceptions.first_line(OSError(" \n "), "none") == "none"
