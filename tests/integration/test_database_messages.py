"""A real PostgreSQL that refuses us is told apart from one that is down."""

import json
import pathlib
import subprocess
import sys
import time
from typing import Any

import pytest
import sqlalchemy as sa

from inspector.db import engine
from lab.servers.postgres import PostgresServer

BIN = pathlib.Path(sys.executable).parent


def run(tmp_path: pathlib.Path, script: str, url: str, *args: str) -> Any:
    conf = tmp_path / "inspector.conf"
    conf.write_text(
        "[DEFAULT]\nstandalone = False\nauth_strategy = noauth\n"
        "transport_url = rabbit://u:p@127.0.0.1:1/\n"
        "[pxe_filter]\ndriver = noop\n"
        "[coordination]\nbackend_url = etcd3+http://127.0.0.1:1\n"
        f"[database]\nconnection = {url}\nmax_retries = 0\n"
    )
    return subprocess.run(
        [str(BIN / script), "--config-file", str(conf), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def said_by_status(stdout: str) -> str:
    checks = json.loads(stdout)["checks"]
    return "\n".join(c["details"] or "" for c in checks)


@pytest.mark.parametrize(
    "script,args",
    [
        ("ironic-inspector-dbsync", ("upgrade",)),
        ("ironic-inspector-status", ("upgrade", "check", "--json")),
    ],
)
def test_wrong_password_and_missing_database(
    tmp_path: pathlib.Path, postgres: PostgresServer, script: str, args: tuple[str]
) -> None:
    wrong = postgres.url.replace("inspector:inspector@", "inspector:not-this-one@")
    dbsync = script == "ironic-inspector-dbsync"
    result = run(tmp_path, script, wrong, *args)
    said = result.stderr if dbsync else said_by_status(result.stdout)
    assert result.returncode == 2, said  # configuration: no restart
    assert "wrong credentials for user inspector" in said, said
    assert "not-this-one" not in result.stderr + result.stdout
    assert "Traceback" not in said and "sqlalchemy" not in said
    missing = postgres.url.rsplit("/", 1)[0] + "/no_such_db"
    result = run(tmp_path, script, missing, *args)
    said = result.stderr if dbsync else said_by_status(result.stdout)
    assert result.returncode == 2, said
    assert "database no_such_db does not exist" in said, said
    down = postgres.url.replace(f":{postgres.port}/", ":1/")
    result = run(tmp_path, script, down, *args)
    said = result.stderr if dbsync else said_by_status(result.stdout)
    assert result.returncode == (1 if dbsync else 2), said  # 1: a restart may help
    assert "unreachable" in said and "Connection refused" in said
    if dbsync:
        assert len(said.strip().splitlines()) == 1, said


def test_pooled_connections_outlive_a_restart(postgres: PostgresServer) -> None:
    """A connection idle in the pool while PostgreSQL restarted is checked
    and replaced before use: nobody's statement fails on it."""
    db = engine.Database(postgres.url)
    try:
        with db.engine.connect() as first, db.engine.connect() as second:
            before = {
                conn.execute(sa.text("SELECT pg_backend_pid()")).scalar()
                for conn in (first, second)
            }
        postgres.pause()
        postgres.resume()
        time.sleep(engine.PING_AFTER_IDLE + 0.2)
        for _ in range(3):
            with db.engine.connect() as conn:
                now = conn.execute(sa.text("SELECT pg_backend_pid()")).scalar()
            assert now not in before
        db.ping()
    finally:
        db.dispose()
