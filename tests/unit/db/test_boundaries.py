"""What inspector.db owns: the storage format and SQLAlchemy's errors."""

import pathlib

import pytest
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from inspector import exceptions, states
from inspector.db import (
    claims,
    conductor_states,
    engine,
    introspections,
    leases,
    migration,
    sweeps,
)
from inspector.db import rules as rules_db
from inspector.rules import validation


def test_condition_columns_are_the_condition_keys() -> None:
    # db.rules keeps its own copy so the API's rule storage does not import
    # the rule plugins; the two must name the same keys
    assert rules_db.CONDITION_COLUMNS == validation.CONDITION_KEYS


UNOPENABLE = "sqlite:////nonexistent-directory/inspector.sqlite"
"""A database the driver cannot open: a real OperationalError underneath."""


def _unreachable() -> engine.Database:
    return engine.Database(UNOPENABLE)


def _is_translated(exc: pytest.ExceptionInfo[exceptions.DatabaseUnavailable]) -> None:
    assert exc.value.message == "The database is unreachable: " + exc.value.reason
    assert exc.value.reason == "unable to open database file"
    assert exc.value.code == 503


def test_a_session_raises_the_projects_error() -> None:
    with pytest.raises(exceptions.DatabaseUnavailable) as exc:
        sweeps.working(_unreachable())
    _is_translated(exc)


def test_the_hot_status_read_raises_the_projects_error() -> None:
    with pytest.raises(exceptions.DatabaseUnavailable) as exc:
        introspections.get(_unreachable(), "7f1a2b3c-0000-4000-8000-000000000000")
    _is_translated(exc)


def test_core_connections_and_the_ping_raise_the_projects_error() -> None:
    db = _unreachable()
    with pytest.raises(exceptions.DatabaseUnavailable) as exc:
        db.ping()
    _is_translated(exc)
    with pytest.raises(exceptions.DatabaseUnavailable), db.connect():
        pass


def test_reading_the_schema_raises_the_projects_error() -> None:
    db = _unreachable()
    db.is_sqlite = False  # as a server database: no "no file yet" shortcut
    with pytest.raises(exceptions.DatabaseUnavailable) as exc:
        migration.current(db)
    _is_translated(exc)
    with pytest.raises(exceptions.ServiceUnavailable, match="cannot reach the data"):
        migration.ensure_schema(db)


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


def test_owners_count_working_introspections() -> None:
    db = engine.Database("sqlite://")
    migration.ensure_schema(db)
    assert claims.owners(db) == {}
    record = introspections.start(db, "7f1a2b3c-0000-4000-8000-000000000000", True)
    assert record.state in states.WORKING
    assert claims.owners(db) == {}  # nobody claimed it yet


def test_conductor_states_round_trip() -> None:
    db = engine.Database("sqlite://")
    migration.ensure_schema(db)
    assert conductor_states.get(db, "c-1") is None
    conductor_states.put(db, "c-1", '{"enabled": false}')
    conductor_states.put(db, "c-0", "{}")
    conductor_states.put(db, "c-1", '{"enabled": true}')
    assert conductor_states.get(db, "c-1") == '{"enabled": true}'
    assert conductor_states.hosts(db) == ["c-0", "c-1"]


def test_a_running_lease_is_held() -> None:
    db = engine.Database("sqlite://")
    migration.ensure_schema(db)
    assert leases.held(db, leases.LEADER) is None
    leases.hold(db, leases.LEADER, "host-a/run", 30)
    found = leases.held(db, leases.LEADER)
    assert found is not None and found[0] == "host-a/run"
    leases.give_up(db, leases.LEADER, "host-a/run")
    assert leases.held(db, leases.LEADER) is None


def test_an_unknown_introspection_and_missing_data_say_which() -> None:
    db = engine.Database("sqlite://")
    migration.ensure_schema(db)
    uuid = "7f1a2b3c-0000-4000-8000-000000000000"
    unknown = (
        f"Node {uuid} was not found in the inspector (it was never "
        "introspected, or its record was removed)"
    )
    with pytest.raises(exceptions.IntrospectionNotFound) as got:
        introspections.get(db, uuid)
    assert got.value.message == unknown
    with pytest.raises(exceptions.IntrospectionNotFound) as changed:
        introspections.transition(db, uuid, states.ABORT)
    assert changed.value.message == unknown
    assert exceptions.DataNotFound(node=uuid).message == (
        f"Introspection data for node {uuid} was not found"
    )
