"""Fixtures shared by the unit tests."""

import json
import pathlib
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from oslo_config import cfg
from oslo_config import fixture as config_fixture

from inspector.conf import opts
from inspector.db import engine, migration

DATA = pathlib.Path(__file__).parents[1] / "data" / "ipa-inventory.json"
"""A post of ironic-python-agent, as the lab's ramdisk sends it."""


@pytest.fixture(scope="session")
def schema_template(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A SQLite file at the newest schema, migrated once per test process
    (each migration run costs ~70 ms; tests/unit/db/test_migration.py runs
    the migrations themselves)."""
    path = tmp_path_factory.mktemp("schema") / "template.sqlite"
    database = engine.Database(f"sqlite:///{path}")
    migration.upgrade(database)
    database.dispose()  # the last connection folds the WAL into the file
    assert not path.with_name(path.name + "-wal").exists()
    return path


def _fresh_database(template: pathlib.Path, directory: pathlib.Path) -> engine.Database:
    """A copy of the migrated ``template`` of its own in ``directory``."""
    path = directory / "db.sqlite"
    shutil.copyfile(template, path)
    return engine.Database(f"sqlite:///{path}")


@pytest.fixture
def db(schema_template: pathlib.Path, tmp_path: pathlib.Path) -> engine.Database:
    """A fresh SQLite database at the newest schema, one per test."""
    return _fresh_database(schema_template, tmp_path)


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


def runtime(conf: cfg.ConfigOpts, db: engine.Database, ironic: Any) -> Any:
    """A :class:`~inspector.runtime.Runtime` of the real configuration and
    database, in-process locks and a fake Ironic (``ironic``)."""
    from inspector.db import data_store
    from inspector.locking.semaphore import SemaphoreLockProvider
    from inspector.runtime import Runtime

    return Runtime(
        conf=conf,
        db=db,
        baremetal=ironic,
        locks=SemaphoreLockProvider(),
        stores=data_store.DataStores(conf, db),
        run_id="run-1",
    )


@pytest.fixture
def data() -> dict[str, Any]:
    """A post of ironic-python-agent (a fresh copy per test)."""
    result: dict[str, Any] = json.loads(DATA.read_text())
    return result
