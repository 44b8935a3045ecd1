"""Fixtures of the database's unit tests."""

import pytest

from inspector.db import engine


@pytest.fixture(params=["returning", "no returning"])
def db(request: pytest.FixtureRequest, db: engine.Database) -> engine.Database:
    """The shared fresh database (tests/unit/conftest.py), once as it is (it
    returns written rows, as PostgreSQL does) and once as MariaDB (writes,
    then reads back)."""
    if request.param == "no returning":
        db.engine.dialect.update_returning = False
        db.engine.dialect.insert_returning = False
    return db
