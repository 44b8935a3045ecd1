"""A database the driver cannot open, and what its error must become."""

import pytest

from inspector import exceptions
from inspector.db import engine

UNOPENABLE = "sqlite:////nonexistent-directory/inspector.sqlite"
"""A database the driver cannot open: a real OperationalError underneath."""


def database() -> engine.Database:
    """A handle on :data:`UNOPENABLE` (nothing is opened until it is used)."""
    return engine.Database(UNOPENABLE)


def assert_translated(
    exc: pytest.ExceptionInfo[exceptions.DatabaseUnavailable],
) -> None:
    """The driver's error became the project's 503, naming the cause."""
    assert exc.value.message == "The database is unreachable: " + exc.value.reason
    assert exc.value.reason == "unable to open database file"
    assert exc.value.code == 503
