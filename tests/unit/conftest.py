"""Fixtures shared by the unit tests."""

import pathlib

import pytest

from inspector.db import engine, migration


@pytest.fixture
def db(tmp_path: pathlib.Path) -> engine.Database:
    """A fresh SQLite database at the newest schema, one per test."""
    database = engine.Database(f"sqlite:///{tmp_path}/db.sqlite")
    migration.upgrade(database)
    return database
