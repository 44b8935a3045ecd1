"""The engine and its one translation of backend errors."""

import pathlib
from typing import Any

import pytest
import sqlalchemy as sa
from oslo_config import cfg
from sqlalchemy import exc as sa_exc

from inspector import bootstrap, exceptions
from inspector.db import engine, introspections, sweeps
from tests.unit.db import unreachable


def test_a_session_raises_the_projects_error() -> None:
    with pytest.raises(exceptions.DatabaseUnavailable) as exc:
        sweeps.working(unreachable.database())
    unreachable.assert_translated(exc)


def test_the_hot_status_read_raises_the_projects_error() -> None:
    with pytest.raises(exceptions.DatabaseUnavailable) as exc:
        introspections.get(
            unreachable.database(), "7f1a2b3c-0000-4000-8000-000000000000"
        )
    unreachable.assert_translated(exc)


def test_core_connections_and_the_ping_raise_the_projects_error() -> None:
    db = unreachable.database()
    with pytest.raises(exceptions.DatabaseUnavailable) as exc:
        db.ping()
    unreachable.assert_translated(exc)
    with pytest.raises(exceptions.DatabaseUnavailable), db.connect():
        pass


def test_a_disconnect_during_a_session_is_translated() -> None:
    db = engine.Database("sqlite://")

    def disconnected(*_args: object) -> None:
        raise sa_exc.DisconnectionError("the server closed the connection")

    with pytest.raises(exceptions.DatabaseUnavailable) as exc, db.session():
        disconnected()
    assert exc.value.reason == "the server closed the connection"


def test_other_database_errors_are_not_an_outage() -> None:
    db = engine.Database("sqlite://")
    with pytest.raises(sa_exc.ProgrammingError), db.session() as session:
        session.execute(sa.text("SELECT 1; SELECT 2"))


def test_the_ping_answers(tmp_path: pathlib.Path) -> None:
    db = engine.Database(f"sqlite:///{tmp_path}/ok.sqlite")
    db.ping()
    assert db.describe() == f"sqlite:///{tmp_path}/ok.sqlite"
    db.dispose()


def test_bad_url_is_config_error() -> None:
    with pytest.raises(exceptions.ConfigError):
        engine.Database("not a url")


@pytest.mark.parametrize(
    "driver_message,expected",
    [
        (
            'connection to server at "db", port 5432 failed: FATAL:  password '
            'authentication failed for user "inspector"',
            "wrong credentials for user inspector (password authentication failed)",
        ),
        (
            'connection to server at "db", port 5432 failed: FATAL:  database '
            '"inspectr" does not exist',
            "database inspectr does not exist on the server",
        ),
        (
            "(1045, \"Access denied for user 'inspector'@'10.0.0.2' (using "
            'password: YES)")',
            "wrong credentials for user inspector (access denied)",
        ),
    ],
)
def test_refusals_are_told_apart_from_outages(
    driver_message: str, expected: str
) -> None:
    error = engine.unreachable(
        sa_exc.OperationalError("SELECT 1", {}, Exception(driver_message))
    )
    assert isinstance(error, exceptions.DatabaseRefused)
    assert error.message.startswith("The database refused the connection: ")
    assert expected in error.message
    assert "unreachable" not in error.message


def test_an_outage_stays_an_outage() -> None:
    error = engine.unreachable(
        sa_exc.OperationalError(
            "SELECT 1", {}, Exception("Connection refused\nIs it running?")
        )
    )
    assert type(error) is exceptions.DatabaseUnavailable
    assert error.message == "The database is unreachable: Connection refused"


def test_wrong_credentials_message() -> None:
    error = engine.unreachable(
        sa_exc.OperationalError(
            "SELECT 1",
            {},
            Exception('FATAL:  password authentication failed for user "inspector"'),
        )
    )
    assert error.message == (
        "The database refused the connection: wrong credentials for user "
        "inspector (password authentication failed); check the user and "
        "password in [database]connection"
    )


def test_missing_driver_library_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_driver(*_args: Any, **_kwargs: Any) -> None:
        raise ImportError("No module named 'psycopg'", name="psycopg")

    monkeypatch.setattr(engine.sa, "create_engine", no_driver)
    with pytest.raises(exceptions.ConfigError) as caught:
        engine.Database("postgresql://u@db/inspector")
    assert (
        "[database]connection postgresql:// needs the Python library psycopg"
        in caught.value.message
    )


# [database] pool options reach SQLAlchemy's pool as ironic-inspector's did
# (its pool size default aside)


def _database(**options: object) -> engine.Database:
    conf = bootstrap.parse_config([], cfg.ConfigOpts())
    options.setdefault("connection", "postgresql+psycopg2://u:p@127.0.0.1:1/x")
    for name, value in options.items():
        conf.set_override(name, value, group="database")
    return engine.from_conf(conf)  # no connection is opened yet


def test_defaults() -> None:
    pool = _database().engine.pool
    assert pool.size() == 10  # type: ignore[attr-defined]  # upstream: 5
    assert pool._max_overflow == 50  # type: ignore[attr-defined]  # noqa: SLF001
    assert pool._recycle == 3600  # noqa: SLF001
    assert pool._timeout == 30  # type: ignore[attr-defined]  # noqa: SLF001


def test_recycle_time_and_sizes_are_honoured() -> None:
    pool = _database(connection_recycle_time=120, max_pool_size=7).engine.pool
    assert pool._recycle == 120  # noqa: SLF001
    assert pool.size() == 7  # type: ignore[attr-defined]


def _outage(line: str = "could not connect to server") -> sa_exc.OperationalError:
    return sa_exc.OperationalError("SELECT 1", {}, Exception(f"{line}\nIs it up?"))


def test_translated_names_an_unreachable_database() -> None:
    with pytest.raises(exceptions.DatabaseUnavailable) as caught, engine.translated():
        raise _outage()
    assert type(caught.value) is exceptions.DatabaseUnavailable
    assert caught.value.reason == "could not connect to server"
    assert isinstance(caught.value.__cause__, sa_exc.OperationalError)
    with pytest.raises(exceptions.DatabaseRefused) as refused, engine.translated():
        raise _outage('password authentication failed for user "inspector"')
    assert "wrong credentials for user inspector" in refused.value.reason


@pytest.mark.parametrize(
    "error",
    [
        sa_exc.IntegrityError("INSERT", {}, Exception("UNIQUE constraint failed")),
        sa_exc.ProgrammingError("SELECT", {}, Exception("syntax error")),
        exceptions.StaleState(node="n", version=1),
        ValueError("not the database's"),
    ],
    ids=["integrity", "programming", "project", "other"],
)
def test_translated_lets_other_errors_pass(error: Exception) -> None:
    with pytest.raises(type(error)) as caught, engine.translated():
        raise error
    assert caught.value is error


class _Opened:
    """A stand-in connection that fails where it is told to."""

    def __init__(self, fail_on: str) -> None:
        self.fail_on = fail_on

    def __enter__(self) -> "_Opened":
        if self.fail_on == "enter":
            raise _outage("refused on connect")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fail_on == "exit":
            raise _outage("gone at commit")


@pytest.mark.parametrize("fail_on", ["open", "enter", "exit"])
def test_translated_covers_opening_and_closing(fail_on: str) -> None:
    def opener() -> _Opened:
        if fail_on == "open":
            raise _outage("refused on checkout")
        return _Opened(fail_on)

    with pytest.raises(exceptions.DatabaseUnavailable), engine.translated(opener):
        pass


def test_a_transaction_commits_or_rolls_back(tmp_path: pathlib.Path) -> None:
    db = engine.Database(f"sqlite:///{tmp_path}/t.sqlite")
    with db.begin() as conn:
        conn.execute(sa.text("CREATE TABLE t (v INTEGER)"))
        conn.execute(sa.text("INSERT INTO t VALUES (1)"))
    with pytest.raises(ValueError), db.begin() as conn:
        conn.execute(sa.text("INSERT INTO t VALUES (2)"))
        raise ValueError("changed my mind")
    with db.connect() as conn:
        assert conn.execute(sa.text("SELECT v FROM t")).scalars().all() == [1]
    db.dispose()


def test_the_package_translates_in_one_place() -> None:
    """Every module reaches the database through Database's connections
    (or ``translated()``), none catches the unreachable errors itself."""
    package = pathlib.Path(engine.__file__).parent
    catching = [
        path.name
        for path in sorted(package.glob("*.py"))
        if "except UNREACHABLE" in path.read_text()
    ]
    assert catching == ["engine.py"]  # Translated's
