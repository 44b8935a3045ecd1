"""Database engine and sessions, built from [database] options.

SQLAlchemy stays inside :mod:`inspector.db`: a database that cannot be
reached leaves this package as :class:`~inspector.exceptions.DatabaseUnavailable`
(a 503 naming the cause), whichever path met it.
"""

import contextlib
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, Generic, TypeVar

import sqlalchemy as sa
from oslo_config import cfg
from sqlalchemy import event, orm, pool
from sqlalchemy import exc as sa_exc

from inspector import exceptions

UNREACHABLE: tuple[type[sa_exc.SQLAlchemyError], ...] = (
    sa_exc.OperationalError,
    sa_exc.InterfaceError,
    sa_exc.DisconnectionError,
)
"""The errors of a database that went away (or never answered)."""


def cause(exc: BaseException) -> str:
    """The first line of the driver's message: one line for logs and clients."""
    return exceptions.first_line(getattr(exc, "orig", None) or exc)


REFUSALS = (
    (
        re.compile(r'password authentication failed for user "?([^"\s]+)', re.I),
        "wrong credentials for user {0} (password authentication failed); "
        "check the user and password in [database]connection",
    ),
    (
        re.compile(r"Access denied for user '?([^'@\s]+)", re.I),
        "wrong credentials for user {0} (access denied); check the user and "
        "password in [database]connection",
    ),
    (
        re.compile(r'database "?([^"\s]+)"? does not exist', re.I),
        "database {0} does not exist on the server; create it (doc/deploy.md) "
        "or fix the name in [database]connection",
    ),
    (
        re.compile(r"Unknown database '?([^'\s]+)", re.I),
        "database {0} does not exist on the server; create it (doc/deploy.md) "
        "or fix the name in [database]connection",
    ),
    (
        re.compile(
            r"permission denied for (?:database|schema|table) \"?([^\"\s]+)", re.I
        ),
        "permission denied on {0}; grant the user of [database]connection access to it",
    ),
)
"""Driver messages that mean the server answered but refused us, and what
to say instead (never the password: the drivers do not print it)."""


def unreachable(exc: BaseException) -> exceptions.DatabaseUnavailable:
    """The project's error for one of :data:`UNREACHABLE` (raise it ``from``
    ``exc``): :class:`~inspector.exceptions.DatabaseRefused` when the server
    answered and refused, else DatabaseUnavailable with the driver's line."""
    text = str(getattr(exc, "orig", None) or exc)
    for pattern, message in REFUSALS:
        found = pattern.search(text)
        if found:
            return exceptions.DatabaseRefused(reason=message.format(found.group(1)))
    return exceptions.DatabaseUnavailable(reason=cause(exc))


T = TypeVar("T")


class Translated(Generic[T]):
    """The one translation of this package: one of :data:`UNREACHABLE`,
    met opening the context manager ``opener`` returns, inside the block or
    closing it (a commit), leaves as :func:`unreachable`'s error; every
    other error passes through as it is.

    A class, not a generator: the hottest reads enter it once each, and a
    generator-based context manager costs several times as much.
    """

    __slots__ = ("_opener", "_inner")

    def __init__(
        self, opener: Callable[[], AbstractContextManager[T]] | None = None
    ) -> None:
        self._opener = opener
        self._inner: AbstractContextManager[T] | None = None

    def __enter__(self) -> T:
        if self._opener is None:
            return None  # type: ignore[return-value]
        try:
            self._inner = self._opener()
            return self._inner.__enter__()
        except UNREACHABLE as exc:
            raise unreachable(exc) from exc

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        inner, self._inner = self._inner, None
        try:
            done = inner.__exit__(kind, exc, traceback) if inner else None
        except UNREACHABLE as error:
            raise unreachable(error) from error
        if isinstance(exc, UNREACHABLE) and not done:
            raise unreachable(exc) from exc
        return done


def translated(
    opener: Callable[[], AbstractContextManager[T]] | None = None,
) -> Translated[T]:
    """``with translated(engine.connect) as conn:``, or ``with translated():``
    around a block that reaches the database by other means (alembic): see
    :class:`Translated`."""
    return Translated(opener)


PING_AFTER_IDLE = 1.0
"""Seconds a pooled server connection may sit idle before it is checked
(``SELECT 1``) on its next use."""


@contextlib.contextmanager
def _one_writer(
    turn: threading.RLock,
    timeout: float,
    open_: Callable[[], AbstractContextManager[sa.Connection]],
) -> Iterator[sa.Connection]:
    """``open_()`` (``engine.begin``) once the process's SQLite write turn
    is taken.

    SQLite has one writer at a time; left to its busy handler, dozens of
    threads retry by sleeping and polling, unfairly, and under load some
    wait past the busy timeout ("database is locked": 1,000 starts at once
    with 64 steps running answered 503). Here a process's writers queue on
    one lock instead, for at most the busy timeout; a thread already
    holding it (a nested transaction) goes on. Other processes (the CLI)
    still meet SQLite's own busy handler.
    """
    if not turn.acquire(timeout=timeout):
        raise sa_exc.OperationalError(
            "BEGIN",
            None,
            # as SQLite words it, without importing its driver here
            TimeoutError(f"database is locked (no write turn within {timeout:g} s)"),
        )
    try:
        with open_() as conn:
            yield conn
    finally:
        turn.release()


class Database:
    """An engine plus a session factory; one per process."""

    def __init__(
        self,
        url: str,
        *,
        busy_timeout_ms: int = 10000,
        pool_size: int = 5,
        max_overflow: int = 50,
        pool_timeout: int = 30,
        pool_recycle: int = 3600,
    ) -> None:
        try:
            parsed = sa.engine.make_url(url)
        except sa_exc.ArgumentError as exc:
            raise exceptions.ConfigError(
                f"Invalid configuration: [database]connection is not a valid "
                f"database URL: {exc}"
            ) from exc
        self.url = parsed
        self.is_sqlite = parsed.get_backend_name() == "sqlite"
        self._write_turn: threading.RLock | None = None
        self._busy_timeout = busy_timeout_ms / 1000
        kwargs: dict[str, Any] = {"future": True}
        if self.is_sqlite:
            kwargs["connect_args"] = {"check_same_thread": False}
            if parsed.database in (None, "", ":memory:"):
                kwargs["poolclass"] = pool.StaticPool
            else:
                # opening a SQLite connection runs the pragmas below; keep every
                # connection the threads need instead of churning overflow ones
                kwargs.update(
                    pool_size=pool_size + max_overflow,
                    max_overflow=0,
                    pool_timeout=pool_timeout,
                )
                self._write_turn = threading.RLock()
        else:
            kwargs.update(
                pool_size=pool_size,
                max_overflow=max_overflow,
                pool_timeout=pool_timeout,
                pool_recycle=pool_recycle,
            )
        try:
            self.engine = sa.create_engine(parsed, **kwargs)
        except ImportError as exc:
            raise exceptions.ConfigError(
                f"Invalid configuration: [database]connection "
                f"{parsed.drivername}:// needs the Python library "
                f"{exc.name or exc!s}, which is not installed (pip install "
                f"{exc.name or '<driver>'}), or name an installed driver in the "
                f"URL, e.g. postgresql+psycopg2:// or mysql+pymysql://"
            ) from exc
        if self.is_sqlite:
            self._tune_sqlite(busy_timeout_ms)
        else:
            self._ping_when_idle()
        self._sessions = orm.sessionmaker(self.engine, expire_on_commit=False)

    def _ping_when_idle(self) -> None:
        """Check a pooled server connection before use if it sat idle.

        A connection back from work a moment ago is alive (under load that is
        every checkout: a ping each was 6 % of a conductor's CPU); one idle
        for PING_AFTER_IDLE seconds may have been closed by the server, a
        proxy or a restart, and is replaced before anybody's statement fails
        on it. A statement failing on a dead connection anyway invalidates
        the whole pool, so the next checkout gets a new one.
        """

        @event.listens_for(self.engine, "checkin")
        def _on_checkin(_dbapi_conn: Any, record: Any) -> None:
            record.info["idle_since"] = time.monotonic()

        @event.listens_for(self.engine, "checkout")
        def _on_checkout(dbapi_conn: Any, record: Any, _proxy: Any) -> None:
            since = record.info.pop("idle_since", None)
            if since is None or time.monotonic() - since < PING_AFTER_IDLE:
                return  # new, or back from work a moment ago
            try:
                cursor = dbapi_conn.cursor()
                try:
                    cursor.execute("SELECT 1")
                finally:
                    cursor.close()
            except Exception as exc:
                # the pool drops this connection and checks out another
                raise sa_exc.DisconnectionError(str(exc)) from exc

    def _tune_sqlite(self, busy_timeout_ms: int) -> None:
        @event.listens_for(self.engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            # WAL lets readers (status GETs) run while a writer commits;
            # the busy timeout makes writers queue instead of failing.
            cursor = dbapi_conn.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

    def session(self) -> Translated[orm.Session]:
        """An ORM session in a transaction: committed on success, rolled back
        on error (for tests' fixtures: the package's own statements are
        Core, see :meth:`begin`).

        :raises DatabaseUnavailable: the database cannot be reached.
        """
        return Translated(self._sessions.begin)

    def connect(self) -> Translated[sa.Connection]:
        """A pooled Core connection, for reads (commit writes yourself).

        :raises DatabaseUnavailable: the database cannot be reached.
        """
        return Translated(self.engine.connect)

    def begin(self) -> Translated[sa.Connection]:
        """A pooled Core connection in a transaction: committed on success,
        rolled back on error.

        On a SQLite file, the process's transactions take turns
        (:func:`_one_writer`).

        :raises DatabaseUnavailable: the database cannot be reached.
        """
        turn = self._write_turn
        if turn is None:
            return Translated(self.engine.begin)
        return Translated(
            lambda: _one_writer(turn, self._busy_timeout, self.engine.begin)
        )

    def ping(self) -> None:
        """``SELECT 1`` on a pooled connection (the health check).

        :raises DatabaseUnavailable: the database did not answer.
        """
        with self.connect() as conn:
            conn.execute(sa.text("SELECT 1"))

    def describe(self) -> str:
        """The URL without its password, for messages."""
        return self.url.render_as_string(hide_password=True)

    def dispose(self) -> None:
        self.engine.dispose()


def from_conf(conf: cfg.ConfigOpts) -> Database:
    db = conf.database
    return Database(
        db.connection,
        busy_timeout_ms=db.sqlite_busy_timeout,
        pool_size=db.max_pool_size,
        max_overflow=db.max_overflow,
        pool_timeout=db.pool_timeout,
        pool_recycle=db.connection_recycle_time,
    )
