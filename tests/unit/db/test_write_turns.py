"""A SQLite file's writers in one process take turns on one lock
(engine._one_writer) instead of retrying inside SQLite's busy handler."""

import pathlib
import threading

import pytest
import sqlalchemy as sa

from inspector import exceptions
from inspector.db import engine


def _database(path: pathlib.Path, busy_timeout_ms: int = 10000) -> engine.Database:
    db = engine.Database(
        f"sqlite:///{path}/turns.sqlite", busy_timeout_ms=busy_timeout_ms
    )
    with db.begin() as conn:
        conn.execute(sa.text("CREATE TABLE counter (n INTEGER)"))
        conn.execute(sa.text("INSERT INTO counter VALUES (0)"))
    return db


def test_many_writers_each_get_their_turn(tmp_path: pathlib.Path) -> None:
    """64 threads, each reading then writing in one transaction, with a
    busy timeout far shorter than the queue: none fails, none is lost."""
    db = _database(tmp_path, busy_timeout_ms=5000)
    failures: list[BaseException] = []
    go = threading.Barrier(64)

    def bump() -> None:
        go.wait()
        try:
            for _ in range(20):
                with db.begin() as conn:
                    n = conn.execute(sa.text("SELECT n FROM counter")).scalar_one()
                    conn.execute(sa.text("UPDATE counter SET n = :n"), {"n": n + 1})
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=bump) for _ in range(64)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    with db.connect() as conn:
        assert conn.execute(sa.text("SELECT n FROM counter")).scalar_one() == 64 * 20


def test_a_nested_transaction_of_the_same_thread_goes_on(
    tmp_path: pathlib.Path,
) -> None:
    db = _database(tmp_path)
    with db.begin() as outer:
        outer.execute(sa.text("SELECT n FROM counter"))
        with db.begin() as inner:  # the same thread: no wait for its own turn
            inner.execute(sa.text("SELECT n FROM counter"))


def test_a_writer_that_never_gets_its_turn_is_told_the_database_is_locked(
    tmp_path: pathlib.Path,
) -> None:
    db = _database(tmp_path, busy_timeout_ms=200)
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with db.begin():
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(10)
        with pytest.raises(exceptions.DatabaseUnavailable, match="database is locked"):
            with db.begin():
                pass
    finally:
        release.set()
        holder.join()
    with db.begin() as conn:  # the turn was given back
        conn.execute(sa.text("UPDATE counter SET n = 1"))


def test_a_failed_transaction_gives_its_turn_back(tmp_path: pathlib.Path) -> None:
    db = _database(tmp_path, busy_timeout_ms=200)
    with pytest.raises(ZeroDivisionError), db.begin():
        1 / 0  # noqa: B018 - the failure is the point
    done = threading.Event()

    def write() -> None:
        with db.begin() as conn:
            conn.execute(sa.text("UPDATE counter SET n = 2"))
        done.set()

    threading.Thread(target=write).start()
    assert done.wait(10)


def test_only_a_sqlite_file_takes_turns() -> None:
    assert engine.Database("sqlite://")._write_turn is None
    assert (
        engine.Database("postgresql+psycopg2://u:p@127.0.0.1:9/x")._write_turn is None
    )
