"""Schema migrations (alembic) driven from a ConfigOpts.

alembic is imported only where a migration runs or its scripts are read:
a service or CLI process whose schema is current (:data:`HEAD`) reads the
one row of the version table and never loads alembic, Mako and the
dialects alembic registers (about 0.17 s of CPU per process start).
"""

import logging
import os
import pathlib
import time
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from inspector import exceptions
from inspector.db.engine import Database, cause, translated

if TYPE_CHECKING:
    from alembic.config import Config

LOG = logging.getLogger(__name__)

SCRIPT_LOCATION = str(pathlib.Path(__file__).parent / "migrations")
VERSION_TABLE = "ironic_inspector_alembic_version"
"""Our own name for alembic's version table: a database shared with another
alembic-managed service keeps its ``alembic_version`` to itself."""

HEAD = "0012"
"""The newest revision in ``migrations/versions``, which a new migration
moves on (``tests/unit/db/test_migration.py`` fails until it does)."""


def _config(db: Database) -> "Config":
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", SCRIPT_LOCATION)
    config.attributes["engine"] = db.engine
    return config


LEGACY_VERSION_TABLE = "alembic_version"
"""Where releases before the version table got its own name kept it."""


def adopt_legacy_version(db: Database) -> None:
    """A database of an earlier release keeps its revision in
    ``alembic_version``: move it to our own version table, once.

    Only a revision this release knows is taken over (and that table
    dropped); an ``alembic_version`` of another service is left alone.
    """
    tables = set(sa.inspect(db.engine).get_table_names())
    if VERSION_TABLE in tables or LEGACY_VERSION_TABLE not in tables:
        return
    if "introspections" not in tables:
        return
    with db.engine.begin() as conn:
        revision = conn.execute(
            sa.text(f"SELECT version_num FROM {LEGACY_VERSION_TABLE}")
        ).scalar()
        if revision not in known():
            return
        conn.execute(
            sa.text(
                f"CREATE TABLE {VERSION_TABLE} (version_num VARCHAR(32) NOT NULL, "
                f"CONSTRAINT {VERSION_TABLE}_pkc PRIMARY KEY (version_num))"
            )
        )
        conn.execute(
            sa.text(f"INSERT INTO {VERSION_TABLE} VALUES (:r)"), {"r": revision}
        )
        conn.execute(sa.text(f"DROP TABLE {LEGACY_VERSION_TABLE}"))


def upgrade(db: Database, revision: str = "head") -> None:
    """Bring the schema to ``revision`` (creating it on an empty database)."""
    if db.is_sqlite and db.url.database:
        pathlib.Path(db.url.database).parent.mkdir(parents=True, exist_ok=True)
    from alembic import command

    adopt_legacy_version(db)
    command.upgrade(_config(db), revision)


class SchemaUnreadable(exceptions.ServiceUnavailable):
    """The database answered, but the schema revision cannot be read (no
    permission, a library missing)."""

    template = "Cannot read the schema revision: %(reason)s"


def current(db: Database) -> str | None:
    """The revision the database is at, or None when it has no schema.

    :raises DatabaseUnavailable: the database cannot be reached.
    :raises SchemaUnreadable: the revision cannot be read.
    """
    if db.is_sqlite and db.url.database and not pathlib.Path(db.url.database).exists():
        return None  # connecting would create an empty file
    try:
        with translated():
            if _at_head(db):
                return HEAD
            from alembic.runtime.migration import MigrationContext

            adopt_legacy_version(db)
            with db.engine.connect() as conn:
                options = {"version_table": VERSION_TABLE}
                context = MigrationContext.configure(conn, opts=options)
                return context.get_current_revision()
    except (sa_exc.SQLAlchemyError, ImportError) as exc:
        raise SchemaUnreadable(reason=cause(exc)) from exc


_VERSION = sa.table(VERSION_TABLE, sa.column("version_num"))


def _at_head(db: Database) -> bool:
    """Whether the version table holds :data:`HEAD` alone: one query, no
    alembic. False for anything else (no table, an older or unknown
    revision, several heads), which alembic then reads.

    :raises SQLAlchemyError: the database cannot be reached or read.
    """
    with db.engine.connect() as conn:
        try:
            rows = conn.execute(sa.select(_VERSION.c.version_num)).scalars().all()
        except sa_exc.ProgrammingError:
            return False  # no version table (PostgreSQL)
        except sa_exc.OperationalError as exc:
            if "no such table" in str(exc):
                return False  # no version table (SQLite)
            raise
    return rows == [HEAD]


def head() -> str | None:
    """The newest revision, as alembic reads the scripts."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory(SCRIPT_LOCATION).get_current_head()


def known() -> set[str]:
    """Every revision this release has a migration for."""
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory(SCRIPT_LOCATION).walk_revisions()
    return {script.revision for script in scripts}


def revision(db: Database, message: str, autogenerate: bool = True) -> None:
    """Write a new migration script comparing the models with ``db``."""
    from alembic import command

    command.revision(_config(db), message=message, autogenerate=autogenerate)


def wait_for_schema(db: Database, max_retries: int, retry_interval: float) -> None:
    """:func:`ensure_schema`, retrying while the database is unreachable.

    ``max_retries`` and ``retry_interval`` are ``[database]``'s, with
    oslo.db's meaning: -1 retries forever. Each failed attempt is logged;
    the last one raises. A SQLite file is there or not: no retries.
    """
    if db.is_sqlite:
        ensure_schema(db)
        return
    attempt = 0
    while True:
        try:
            ensure_schema(db)
            return
        except exceptions.ServiceUnavailable as exc:
            if 0 <= max_retries <= attempt:
                raise
            attempt += 1
            limit = "unlimited" if max_retries < 0 else str(max_retries)
            LOG.warning(
                "%s; retry %d of %s in %s s ([database]max_retries, retry_interval)",
                exc,
                attempt,
                limit,
                retry_interval,
            )
            time.sleep(retry_interval)


def ensure_schema(db: Database) -> None:
    """Make sure the schema is current before the service uses it.

    SQLite belongs to this one process, so it is upgraded in place (a new
    user needs no extra step); a server database is shared with other
    processes and must be upgraded by the operator with
    ``ironic-inspector-dbsync upgrade``.
    """
    if db.is_sqlite:
        try:
            if not _is_current_sqlite(db):
                upgrade(db)
        except sa_exc.OperationalError as exc:
            # a file that cannot be made or written stays so: no retry helps
            raise exceptions.ConfigError(
                f"cannot create or write the SQLite file {db.url.database} "
                f"([database]connection): {cause(exc)}; its directory must be "
                "writable by the service's user (uid "
                f"{os.getuid()}), not on a read-only volume"
            ) from exc
        return
    try:
        have = current(db)
    except exceptions.DatabaseRefused as exc:
        raise exceptions.ConfigError(
            f"The database {db.describe()} refused the connection: {exc.reason}"
        ) from exc
    except exceptions.DatabaseUnavailable as exc:
        raise exceptions.ServiceUnavailable(
            reason=f"cannot reach the database {db.describe()} "
            f"([database]connection): {exc.reason}"
        ) from exc
    want = HEAD
    if have != want:
        raise exceptions.ConfigError(
            f"Database schema is at revision {have or 'none'}, this release "
            f"needs {want}: run 'ironic-inspector-dbsync --config-file ... "
            "upgrade' first"
        )


def _is_current_sqlite(db: Database) -> bool:
    """A SQLite file already at :data:`HEAD` (no upgrade to run)."""
    if not db.url.database or db.url.database == ":memory:":
        return False
    try:
        return current(db) == HEAD
    except exceptions.ServiceUnavailable:
        return False  # let the upgrade say what is wrong
