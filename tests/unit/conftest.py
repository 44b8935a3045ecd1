"""Fixtures shared by the unit tests."""

import json
import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
from oslo_config import cfg
from oslo_config import fixture as config_fixture

from inspector.conf import opts
from inspector.db import engine, migration

DATA = pathlib.Path(__file__).parents[1] / "data" / "ipa-inventory.json"
"""A post of ironic-python-agent, as the lab's ramdisk sends it."""


@pytest.fixture
def db(tmp_path: pathlib.Path) -> engine.Database:
    """A fresh SQLite database at the newest schema, one per test."""
    database = engine.Database(f"sqlite:///{tmp_path}/db.sqlite")
    migration.upgrade(database)
    return database


@pytest.fixture
def conf() -> Iterator[cfg.ConfigOpts]:
    """Every option registered, at its default; overrides end with the test."""
    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    conf([])
    fixture = config_fixture.Config(conf)
    fixture.setUp()
    yield conf
    fixture.cleanUp()


@pytest.fixture
def data() -> dict[str, Any]:
    """A post of ironic-python-agent (a fresh copy per test)."""
    result: dict[str, Any] = json.loads(DATA.read_text())
    return result
