"""Schema migrations: the models and the migrations agree; earlier
releases' databases are adopted; the schema read translates outages."""

import pathlib
import subprocess
import sys
from typing import Any

import pytest
import sqlalchemy as sa

from inspector import exceptions
from inspector.db import engine, migration
from tests.unit.db import unreachable


def test_migrations_match_models(db: engine.Database) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from inspector.db import models

    with db.engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"version_table": migration.VERSION_TABLE}
        )
        diff = compare_metadata(context, models.Base.metadata)
    assert diff == []
    assert migration.current(db) == migration.head()


def test_database_of_an_earlier_release_is_adopted(tmp_path: Any) -> None:
    """Before the version table had our own name it was alembic_version."""

    old = engine.Database(f"sqlite:///{tmp_path}/old.sqlite")
    migration.upgrade(old, "0002")
    with old.engine.begin() as conn:
        conn.execute(
            sa.text(f"ALTER TABLE {migration.VERSION_TABLE} RENAME TO alembic_version")
        )
    assert migration.current(old) == "0002"  # found and moved over
    migration.upgrade(old)
    assert migration.current(old) == migration.head()
    tables = set(sa.inspect(old.engine).get_table_names())
    assert "alembic_version" not in tables and "conductor_states" in tables
    old.dispose()


def test_foreign_alembic_version_is_left_alone(tmp_path: Any) -> None:

    shared = engine.Database(f"sqlite:///{tmp_path}/shared.sqlite")
    with shared.engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE alembic_version (version_num VARCHAR(32))"))
        conn.execute(sa.text("INSERT INTO alembic_version VALUES ('f00dfeed')"))
    migration.upgrade(shared)
    with shared.engine.connect() as conn:
        assert (
            conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
            == "f00dfeed"
        )
    assert migration.current(shared) == migration.head()
    shared.dispose()


def test_reading_the_schema_raises_the_projects_error() -> None:
    db = unreachable.database()
    db.is_sqlite = False  # as a server database: no "no file yet" shortcut
    with pytest.raises(exceptions.DatabaseUnavailable) as exc:
        migration.current(db)
    unreachable.assert_translated(exc)
    with pytest.raises(exceptions.ServiceUnavailable, match="cannot reach the data"):
        migration.ensure_schema(db)


def test_an_unwritable_sqlite_file_is_a_configuration_error() -> None:
    """A read-only volume (here /proc, read-only even for root) where the
    file should be: one line naming it, no retries, exit 2 at start."""
    db = engine.Database("sqlite:////proc/inspector.sqlite")
    with pytest.raises(exceptions.ConfigError) as raised:
        migration.wait_for_schema(db, max_retries=-1, retry_interval=60)
    assert "cannot create or write the SQLite file /proc/inspector.sqlite" in str(
        raised.value
    )
    assert "unable to open database file" in str(raised.value)
    db.dispose()


def test_head_is_the_newest_script() -> None:
    """A new migration moves :data:`migration.HEAD` on with it."""
    assert migration.HEAD == migration.head()
    assert migration.HEAD in migration.known()


def test_an_older_sqlite_file_is_upgraded_at_start(tmp_path: Any) -> None:
    old = engine.Database(f"sqlite:///{tmp_path}/old.sqlite")
    migration.upgrade(old, "0002")
    migration.ensure_schema(old)
    assert migration.current(old) == migration.HEAD
    old.dispose()


CURRENT_SCHEMA = """
import sys
from inspector.db import engine, migration
db = engine.Database(sys.argv[1])
migration.ensure_schema(db)
print(migration.current(db), "alembic" in sys.modules)
"""


def test_a_current_schema_is_checked_without_alembic(tmp_path: Any) -> None:
    """A process start on a current database reads one row; alembic (and
    Mako, and every dialect it registers) stays unloaded."""
    url = f"sqlite:///{tmp_path}/current.sqlite"
    migration.upgrade(engine.Database(url))
    result = subprocess.run(
        [sys.executable, "-c", CURRENT_SCHEMA, url],
        capture_output=True,
        text=True,
        check=False,
        cwd=pathlib.Path(migration.__file__).parents[2],
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [migration.HEAD, "False"]


def test_a_server_database_behind_is_refused(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A version table at another revision is read by alembic and, on a
    server database (which the operator upgrades), refused by name."""
    db = engine.Database(f"sqlite:///{tmp_path}/x.sqlite")
    migration.upgrade(db, "0003")
    assert migration.current(db) == "0003"
    monkeypatch.setattr(db, "is_sqlite", False)  # as PostgreSQL is treated
    with pytest.raises(exceptions.ConfigError, match="at revision 0003"):
        migration.ensure_schema(db)
    db.dispose()
