"""Importing an ironic-inspector 12.x database (its schema as 12.5 makes
it, on SQLite): the plan names what cannot come across, the import
writes everything else in one transaction, a second run imports
nothing twice, and a node 12.x is working on stops it."""

import datetime
import json
import pathlib
from typing import Any

import pytest
import sqlalchemy as sa
from oslo_config import cfg

from inspector import exceptions, states
from inspector.db import engine, hardware_runs, introspections, stored_data
from inspector.db import rules as rules_db
from inspector.importing import from_database, plan, write

SCHEMA = (
    "CREATE TABLE nodes (uuid VARCHAR(36) PRIMARY KEY, version_id VARCHAR(36), "
    "state VARCHAR(10) NOT NULL, started_at DATETIME, finished_at DATETIME, "
    "error TEXT, manage_boot BOOLEAN)",
    "CREATE TABLE attributes (uuid VARCHAR(36) PRIMARY KEY, node_uuid "
    "VARCHAR(36), name VARCHAR(255) NOT NULL, value VARCHAR(255))",
    "CREATE TABLE options (uuid VARCHAR(36), name VARCHAR(255), value TEXT, "
    "PRIMARY KEY (uuid, name))",
    "CREATE TABLE rules (uuid VARCHAR(36) PRIMARY KEY, created_at DATETIME NOT "
    "NULL, description TEXT, disabled BOOLEAN, scope VARCHAR(255))",
    "CREATE TABLE rule_conditions (id INTEGER PRIMARY KEY, rule VARCHAR(36), "
    "op VARCHAR(255) NOT NULL, multiple VARCHAR(255) NOT NULL, invert BOOLEAN, "
    "field TEXT, params TEXT)",
    "CREATE TABLE rule_actions (id INTEGER PRIMARY KEY, rule VARCHAR(36), "
    "action VARCHAR(255) NOT NULL, params TEXT)",
    "CREATE TABLE introspection_data (uuid VARCHAR(36), processed BOOLEAN, "
    "data TEXT, PRIMARY KEY (uuid, processed))",
)
"""ironic-inspector 12.5's tables, as its migrations leave them."""

DONE = "11111111-0000-4000-8000-000000000001"
FAILED = "22222222-0000-4000-8000-000000000002"
WAITING = "33333333-0000-4000-8000-000000000003"
SWIFT = "44444444-0000-4000-8000-000000000004"
RULE = "aaaaaaaa-0000-4000-8000-00000000000a"
BROKEN = "bbbbbbbb-0000-4000-8000-00000000000b"
T = datetime.datetime(2026, 11, 20, 9, 30, 0)


def _insert(conn: sa.Connection, table: str, **values: Any) -> None:
    names = ", ".join(values)
    marks = ", ".join(f":{n}" for n in values)
    conn.execute(sa.text(f"INSERT INTO {table} ({names}) VALUES ({marks})"), values)


@pytest.fixture
def upstream(tmp_path: pathlib.Path, data: dict[str, Any]) -> str:
    """A 12.x database: a finished node with its data, a failed one, one
    waiting for its ramdisk, one whose data went to Swift; a rule and one
    this service refuses."""
    url = f"sqlite:///{tmp_path / 'upstream.sqlite'}"
    made = sa.create_engine(url)
    with made.begin() as conn:
        for statement in SCHEMA:
            conn.execute(sa.text(statement))
        for uuid, state, error in (
            (DONE, "finished", None),
            (FAILED, "error", "Introspection timeout"),
            (WAITING, "waiting", None),
            (SWIFT, "finished", None),
        ):
            finished = None if state == "waiting" else T + datetime.timedelta(minutes=3)
            _insert(
                conn,
                "nodes",
                uuid=uuid,
                version_id="v",
                state=state,
                started_at=T,
                finished_at=finished,
                error=error,
                manage_boot=True,
            )
        for node, name, value in (
            (DONE, "mac", "52:54:00:aa:00:01"),
            (WAITING, "mac", "52:54:00:bb:00:01"),
            (WAITING, "bmc_address", "10.0.0.33"),
        ):
            _insert(
                conn,
                "attributes",
                uuid=f"{node[:8]}-{value}",
                node_uuid=node,
                name=name,
                value=value,
            )
        _insert(conn, "options", uuid=SWIFT, name="new_ipmi_credentials", value="{}")
        processed = dict(data, memory_mb=98304, cpus=32, local_gb=446)
        for flag, body in ((1, processed), (0, data)):
            _insert(
                conn,
                "introspection_data",
                uuid=DONE,
                processed=flag,
                data=json.dumps(body),
            )
        _insert(
            conn,
            "rules",
            uuid=RULE,
            created_at=T,
            description="big memory",
            disabled=True,
            scope=None,
        )
        _insert(
            conn,
            "rule_conditions",
            id=1,
            rule=RULE,
            op="ge",
            multiple="any",
            invert=False,
            field="memory_mb",
            params=json.dumps({"value": 65536}),
        )
        _insert(
            conn,
            "rule_actions",
            id=1,
            rule=RULE,
            action="set-capability",
            params=json.dumps({"name": "big", "value": "yes"}),
        )
        _insert(conn, "rules", uuid=BROKEN, created_at=T, description="x", disabled=0)
        _insert(
            conn,
            "rule_actions",
            id=2,
            rule=BROKEN,
            action="no-such-action",
            params="{}",
        )
    made.dispose()
    return url


def test_the_plan_names_what_cannot_come_across(
    upstream: str, db: engine.Database, conf: cfg.ConfigOpts
) -> None:
    judged = plan.judge(db, conf, from_database.read(upstream))
    summary = judged.summary()

    assert summary["nodes"] == 4 and summary["rules"] == 1
    assert summary["nodes_by_state"] == {"error": 1, "finished": 2, "waiting": 1}
    assert summary["lookup_attributes"] == 3
    assert summary["stored_data"] == {"processed": 1, "unprocessed": 1}
    assert summary["history_seeded"] == 1
    cannot = "\n".join(summary["cannot_import"])
    assert f"node {SWIFT}: its introspection data" in cannot
    assert "option 'new_ipmi_credentials'" in cannot
    assert f"rule {BROKEN} (x): refused here" in cannot
    assert "no-such-action" in cannot
    assert summary["blocked_by"] == []
    with pytest.raises(exceptions.IntrospectionNotFound):
        introspections.get(db, DONE)  # judged, nothing written


def test_the_import_keeps_statuses_lookup_rules_data_and_starts_history(
    upstream: str, db: engine.Database, conf: cfg.ConfigOpts
) -> None:
    judged = plan.judge(db, conf, from_database.read(upstream))
    written = write.apply(db, judged)

    assert written == {"nodes": 4, "attributes": 3, "data": 2, "runs": 1, "rules": 1}
    done = introspections.get(db, DONE)
    assert (done.state, done.started_at, done.error) == (states.FINISHED, T, None)
    assert introspections.get(db, FAILED).error == "Introspection timeout"
    waiting = introspections.lookup(db, {"mac": ["52:54:00:bb:00:01"]})
    assert waiting.uuid == WAITING and waiting.state == states.WAITING
    assert stored_data.get(db, DONE, processed=True)["memory_mb"] == 98304
    assert "inventory" in stored_data.get(db, DONE, processed=False)
    [run] = hardware_runs.history(db, DONE, limit=10)
    assert (run.source, run.state, run.changes) == ("upstream", states.FINISHED, 0)
    assert done.hardware_run == run.uuid
    rule = rules_db.get(db, RULE)
    with db.connect() as conn:
        row = conn.execute(
            sa.text("SELECT disabled, created_at FROM rules WHERE uuid = :u"),
            {"u": RULE},
        ).one()
    assert bool(row.disabled) and str(row.created_at).startswith("2026-11-20 09:30")
    assert rule["conditions"][0]["field"] == "memory_mb"
    assert rule["actions"][0]["action"] == "set-capability"


def test_a_second_run_imports_nothing_twice(
    upstream: str, db: engine.Database, conf: cfg.ConfigOpts
) -> None:
    write.apply(db, plan.judge(db, conf, from_database.read(upstream)))

    again = plan.judge(db, conf, from_database.read(upstream))

    assert again.nodes == [] and again.rules == []
    assert len(again.nodes_present) == 4 and again.rules_present == [RULE]
    assert write.apply(db, again)["nodes"] == 0
    assert len(hardware_runs.history(db, DONE, limit=10)) == 1


def test_a_node_being_worked_on_stops_the_import(
    upstream: str, db: engine.Database, conf: cfg.ConfigOpts
) -> None:
    made = sa.create_engine(upstream)
    with made.begin() as conn:
        conn.execute(
            sa.text(f"UPDATE nodes SET state = 'processing' WHERE uuid = '{FAILED}'")
        )
    made.dispose()
    judged = plan.judge(db, conf, from_database.read(upstream))

    assert judged.blockers and f"node {FAILED} is processing" in judged.blockers[0]
    with pytest.raises(exceptions.InvalidInput, match="Nothing imported"):
        write.apply(db, judged)
    with pytest.raises(exceptions.IntrospectionNotFound):
        introspections.get(db, DONE)


def test_a_failure_while_writing_writes_nothing(
    upstream: str,
    db: engine.Database,
    conf: cfg.ConfigOpts,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    judged = plan.judge(db, conf, from_database.read(upstream))

    def broken(*args: Any, **kwargs: Any) -> None:
        raise exceptions.DatabaseUnavailable(reason="the disk is full")

    monkeypatch.setattr(write.rules, "insert", broken)  # the last write
    with pytest.raises(exceptions.DatabaseUnavailable):
        write.apply(db, judged)

    with pytest.raises(exceptions.IntrospectionNotFound):
        introspections.get(db, DONE)
    assert hardware_runs.history(db, DONE, limit=10) == []


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("sqlite:////nonexistent-dir/x.sqlite", "cannot be read"),
        ("not a url", "--connection"),
    ],
)
def test_an_unreadable_source_is_named(url: str, message: str) -> None:
    with pytest.raises(exceptions.InvalidInput, match=message):
        from_database.read(url)


def test_a_database_that_is_not_12x_is_named(
    tmp_path: pathlib.Path, db: engine.Database
) -> None:
    other = f"sqlite:///{tmp_path / 'other.sqlite'}"
    made = sa.create_engine(other)
    with made.begin() as conn:
        conn.execute(sa.text("CREATE TABLE nodes (uuid VARCHAR(36))"))
    made.dispose()
    with pytest.raises(exceptions.InvalidInput, match="not ironic-inspector 12.x"):
        from_database.read(other)
