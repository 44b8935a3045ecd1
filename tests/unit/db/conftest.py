"""Fixtures of the database's unit tests."""

import pathlib

import pytest

from inspector.db import engine, migration


@pytest.fixture(params=["returning", "no returning"])
def db(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> engine.Database:
    """SQLite at the newest schema; once as it is (it returns written rows,
    as PostgreSQL does) and once as MariaDB (writes, then reads back)."""
    database = engine.Database(f"sqlite:///{tmp_path}/db.sqlite")
    migration.upgrade(database)
    if request.param == "no returning":
        database.engine.dialect.update_returning = False
        database.engine.dialect.insert_returning = False
    return database
