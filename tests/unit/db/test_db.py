import pathlib
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from inspector import exceptions, states
from inspector.db import engine, introspections, migration, stored_data

UUID = "11111111-2222-4333-8444-555555555555"


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


def _statements(db: engine.Database) -> list[str]:
    seen: list[str] = []
    sa.event.listen(
        db.engine,
        "before_cursor_execute",
        lambda _c, _cur, statement, *_a: seen.append(statement.split()[0]),
    )
    return seen


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


def test_compare_and_swap_fences_stale_writers(db: engine.Database) -> None:
    record = introspections.start(db, UUID, True, {"mac": ["aa:bb:cc:dd:ee:ff"]})
    waiting = introspections.transition(
        db, UUID, states.WAIT, expected_version=record.version
    )
    assert waiting.version == record.version + 1
    with pytest.raises(exceptions.StaleState):
        introspections.transition(
            db, UUID, states.FAIL, expected_version=record.version, error="late"
        )
    assert introspections.get(db, UUID).state == states.WAITING


def test_claim_and_ownership_columns(db: engine.Database) -> None:
    record = introspections.start(db, UUID, True, {}, claim_within=30)
    assert record.owner is None and record.deadline is not None
    assert record.deadline > record.started_at
    claimed = introspections.claim(db, UUID, record.version, "c1", "run1")
    assert (claimed.owner, claimed.owner_run, claimed.deadline) == ("c1", "run1", None)
    assert claimed.version == record.version + 1
    with pytest.raises(exceptions.StaleState):  # the earlier holder is fenced off
        introspections.claim(db, UUID, record.version, "c2", "run2")
    with pytest.raises(exceptions.StaleState):
        introspections.check_current(db, UUID, record.version)
    introspections.check_current(db, UUID, claimed.version)
    waiting = introspections.transition(
        db, UUID, states.WAIT, expected_version=claimed.version
    )
    assert waiting.owner is None and waiting.deadline is None  # the ramdisk's turn
    assert [r.uuid for r in introspections.working(db)] == []


def test_final_state_drops_lookup_attributes(db: engine.Database) -> None:
    introspections.start(db, UUID, True, {"mac": ["aa:bb:cc:dd:ee:ff"]})
    assert introspections.lookup(db, {"mac": ["aa:bb:cc:dd:ee:ff"]}).uuid == UUID
    introspections.transition(db, UUID, states.FAIL, error="boom")
    with pytest.raises(exceptions.LookupFailed):
        introspections.lookup(db, {"mac": ["aa:bb:cc:dd:ee:ff"]})
    record = introspections.get(db, UUID)
    assert record.error == "boom" and record.finished_at is not None


def test_lookup_ambiguous(db: engine.Database) -> None:
    other = "99999999-2222-4333-8444-555555555555"
    introspections.start(db, UUID, True, {"bmc_address": ["10.0.0.1"]})
    introspections.start(db, other, True, {"bmc_address": ["10.0.0.1"]})
    with pytest.raises(exceptions.LookupFailed) as err:
        introspections.lookup(db, {"bmc_address": ["10.0.0.1"]})
    assert "Multiple" in str(err.value)


def test_restart_resets_error(db: engine.Database) -> None:
    introspections.start(db, UUID, True)
    introspections.transition(db, UUID, states.FAIL, error="boom")
    again = introspections.start(db, UUID, False)
    assert again.state == states.STARTING
    assert again.error is None and again.finished_at is None
    assert again.manage_boot is False


def test_start_while_starting_refused(db: engine.Database) -> None:
    introspections.start(db, UUID, True)
    with pytest.raises(exceptions.InvalidTransition):
        introspections.start(db, UUID, True)


def test_raw_data_stored_with_transition(db: engine.Database) -> None:
    introspections.start(db, UUID, True)
    introspections.transition(db, UUID, states.WAIT)
    introspections.transition(db, UUID, states.PROCESS, raw_data={"a": 1})
    assert stored_data.get(db, UUID, processed=False) == {"a": 1}
    with pytest.raises(exceptions.DataNotFound):
        stored_data.get(db, UUID, processed=True)
    # a second post of the same machine replaces the first
    introspections.transition(db, UUID, states.FAIL, error="x")
    introspections.start(db, UUID, True)
    introspections.transition(db, UUID, states.WAIT)
    introspections.transition(db, UUID, states.PROCESS, raw_data={"b": 2})
    assert stored_data.get(db, UUID, processed=False) == {"b": 2}


@pytest.mark.parametrize("upsert", [True, False], ids=["upsert", "update, insert"])
def test_stored_data_is_replaced_in_one_statement_where_possible(
    db: engine.Database, upsert: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not upsert:  # a dialect without ON CONFLICT (MariaDB)
        monkeypatch.setattr(stored_data, "_UPSERTS", {})
    introspections.start(db, UUID, True)
    seen = _statements(db)
    stored_data.store(db, UUID, {"first": 1}, processed=True)
    stored_data.store(db, UUID, {"second": 2}, processed=True)
    stored_data.store(db, UUID, {"raw": 3}, processed=False)
    assert stored_data.get(db, UUID, processed=True) == {"second": 2}
    assert stored_data.get(db, UUID, processed=False) == {"raw": 3}
    writes = [s for s in seen if s != "SELECT"]
    if upsert:
        assert writes == ["INSERT"] * 3
    else:
        assert writes == ["UPDATE", "INSERT", "UPDATE", "UPDATE", "INSERT"]


def test_writes_return_what_they_wrote(db: engine.Database) -> None:
    """Each write answers with the row as stored, in as few statements as
    the database allows."""
    returning = db.engine.dialect.update_returning
    seen = _statements(db)
    started = introspections.start(db, UUID, True, {"mac": ["aa:bb:cc:dd:ee:ff"]})
    assert seen == ["SELECT", "INSERT"] + ([] if returning else ["SELECT"]) + [
        "DELETE",
        "INSERT",
    ]
    assert started == introspections.get(db, UUID)
    seen.clear()
    claimed = introspections.claim(db, UUID, started.version, "c1", "r1")
    assert seen == ["UPDATE"] + ([] if returning else ["SELECT"])
    assert claimed == introspections.get(db, UUID)
    assert claimed.owner == "c1" and claimed.version == started.version + 1
    seen.clear()
    waiting = introspections.transition(db, UUID, states.WAIT)
    assert seen == ["SELECT", "UPDATE"] + ([] if returning else ["SELECT"])
    assert waiting == introspections.get(db, UUID)
    assert waiting.state == states.WAITING and waiting.owner is None
    introspections.transition(db, UUID, states.PROCESS)
    finished = introspections.transition(db, UUID, states.FAIL, error="boom")
    assert finished == introspections.get(db, UUID)
    assert finished.finished_at is not None and finished.error == "boom"
    again = introspections.start(db, UUID, False)
    assert again == introspections.get(db, UUID)
    assert (again.state, again.error, again.finished_at) == (
        states.STARTING,
        None,
        None,
    )
    assert again.deadline is not None and again.version == finished.version + 1


def test_bad_url_is_config_error() -> None:
    with pytest.raises(exceptions.ConfigError):
        engine.Database("not a url")


def test_database_of_an_earlier_release_is_adopted(tmp_path: Any) -> None:
    """Before the version table had our own name it was alembic_version."""
    import sqlalchemy as sa

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
    import sqlalchemy as sa

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


def test_a_fence_reads_the_version_alone(db: engine.Database) -> None:
    record = introspections.start(db, UUID, True)
    seen = _statements(db)
    introspections.check_current(db, UUID, record.version)
    assert seen == ["SELECT"]
    with pytest.raises(exceptions.StaleState):
        introspections.check_current(db, UUID, record.version - 1)
    with pytest.raises(exceptions.StaleState):  # no introspection at all
        introspections.check_current(db, "0" * 8 + UUID[8:], record.version)


def test_a_transition_from_the_row_the_caller_holds_does_not_read_it(
    db: engine.Database,
) -> None:
    record = introspections.start(db, UUID, True, {"mac": ["aa:bb:cc:dd:ee:ff"]})
    claimed = introspections.claim(db, UUID, record.version, "c1", "run-1")
    seen = _statements(db)
    waiting = introspections.transition(
        db, UUID, states.WAIT, expected_version=claimed.version, current=claimed
    )
    assert waiting.state == states.WAITING
    assert waiting.version == claimed.version + 1
    returning = db.engine.dialect.update_returning
    assert seen == (["UPDATE"] if returning else ["UPDATE", "SELECT"])
    # the row moved on since: the write is refused, nothing changes
    with pytest.raises(exceptions.StaleState):
        introspections.transition(
            db, UUID, states.FAIL, expected_version=claimed.version, current=claimed
        )
    assert introspections.get(db, UUID) == waiting
    # a final state from a held row drops the lookup attributes all the same
    processing = introspections.transition(
        db, UUID, states.PROCESS, expected_version=waiting.version, current=waiting
    )
    ended = introspections.transition(
        db,
        UUID,
        states.FINISH,
        expected_version=processing.version,
        current=processing,
    )
    assert ended.state == states.FINISHED and ended.finished_at is not None
    with pytest.raises(exceptions.NotFound):
        introspections.lookup(db, {"mac": ["aa:bb:cc:dd:ee:ff"]})
    with pytest.raises(ValueError):
        introspections.transition(
            db, UUID, states.START, expected_version=ended.version + 1, current=ended
        )


def test_data_read_with_the_fence_of_its_step(db: engine.Database) -> None:
    record = introspections.start(db, UUID, True)
    with pytest.raises(exceptions.DataNotFound):
        stored_data.get_post(db, UUID, record.version)
    stored_data.store(db, UUID, {"processed": 1}, processed=True)
    with pytest.raises(exceptions.DataNotFound):  # the raw post only
        stored_data.get_post(db, UUID, record.version)
    stored_data.store(db, UUID, {"raw": 1}, processed=False)
    seen = _statements(db)
    assert stored_data.get_post(db, UUID, record.version).data == {"raw": 1}
    assert seen == ["SELECT"]
    with pytest.raises(exceptions.StaleState):
        stored_data.get_post(db, UUID, record.version - 1)
    with pytest.raises(exceptions.StaleState):  # no introspection at all
        stored_data.get_post(db, "0" * 8 + UUID[8:], 1)


def _rule(n: int, disabled: bool = False) -> dict[str, Any]:
    return {
        "uuid": f"{n:08d}-2222-4333-8444-555555555555",
        "description": f"rule {n}",
        "scope": None if n % 2 else "rack-1",
        "conditions": [
            {
                "op": "eq",
                "field": f"memory_mb{n}",
                "multiple": "any",
                "invert": False,
                "value": n,
            },
            {
                "op": "ge",
                "field": "cpus",
                "multiple": "all",
                "invert": True,
                "value": 2 * n,
            },
        ][: 1 + n % 2],
        "actions": [
            {"action": "set-attribute", "path": f"/extra/r{n}", "value": n},
            {"action": "add-trait", "name": f"CUSTOM_{n}"},
        ][: 2 - n % 2],
    }


def test_enabled_rules_are_read_with_their_own_conditions_and_actions(
    db: engine.Database,
) -> None:
    from inspector.db import rules as rules_db

    seen = _statements(db)
    assert rules_db.list_all(db) == []
    assert seen == ["SELECT"]  # no rule: one statement
    created = [rules_db.create(db, _rule(n)) for n in (3, 1, 2, 4)]
    off = rules_db.create(db, _rule(5))
    with db.engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE rules SET disabled = :t WHERE uuid = :u"),
            {"t": True, "u": off["uuid"]},
        )
    seen.clear()
    listed = rules_db.list_all(db)
    assert seen == ["SELECT"] * 3
    # in the order they were created, each as the rules API returns it
    assert listed == created
    assert listed == [rules_db.get(db, r["uuid"]) for r in created]
    assert [len(r["conditions"]) for r in listed] == [2, 2, 1, 1]
    assert listed[0]["conditions"][1] == {
        "op": "ge",
        "field": "cpus",
        "multiple": "all",
        "invert": True,
        "value": 6,
    }
