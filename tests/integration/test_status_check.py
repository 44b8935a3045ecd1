"""ironic-inspector-status against a real PostgreSQL: the schema revision."""

import json
import pathlib
import subprocess
import sys

from lab.servers import loopback
from lab.servers.postgres import PostgresServer

BIN = pathlib.Path(sys.executable).parent


def _command(name: str, conf: pathlib.Path, *args: str) -> list[str]:
    return [str(BIN / name), "--config-file", str(conf), *args]


def test_schema_behind_and_current(
    postgres: PostgresServer, tmp_path: pathlib.Path
) -> None:
    postgres.create_database("inspector_status")
    url = postgres.url.rsplit("/", 1)[0] + "/inspector_status"
    # backends where nothing listens: ports free now, not the well-known
    # ones (a developer's own etcd or RabbitMQ may run on them)
    broker = f"rabbit://127.0.0.1:{loopback.free_port()}/"
    etcd = f"etcd3+http://127.0.0.1:{loopback.free_port()}"
    conf = tmp_path / "inspector.conf"
    conf.write_text(
        f"[DEFAULT]\nstandalone = False\ntransport_url = {broker}\n"
        f"[database]\nconnection = {url}\n"
        f"[coordination]\nbackend_url = {etcd}\n"
        # the default (iptables on br-ctlplane, as upstream) needs that interface
        "[pxe_filter]\ndriver = noop\n"
    )
    dbsync = ("ironic-inspector-dbsync", conf)
    subprocess.run(
        _command(*dbsync, "upgrade", "--revision", "0001"),
        check=True,
        capture_output=True,
        timeout=120,
    )
    check = _command("ironic-inspector-status", conf, "upgrade", "check", "--json")
    behind = subprocess.run(check, capture_output=True, text=True, timeout=120)
    assert behind.returncode == 2, behind.stdout + behind.stderr
    details = {c["check"]: c["details"] for c in json.loads(behind.stdout)["checks"]}
    from inspector.db import migration

    assert details["Database schema"].endswith(
        f"is at revision 0001, this release needs {migration.head()}: run "
        "ironic-inspector-dbsync upgrade"
    ), details
    subprocess.run(
        _command(*dbsync, "upgrade"), check=True, capture_output=True, timeout=120
    )
    current = subprocess.run(check, capture_output=True, text=True, timeout=120)
    details = {c["check"]: c for c in json.loads(current.stdout)["checks"]}
    assert details["Database schema"]["result"] == 0, details
    # nothing listens where this configuration points: each backend says so
    for name, url in (("Coordination backend", etcd), ("Message broker", broker)):
        assert details[name]["result"] == 2, details[name]
        assert details[name]["details"].startswith(f"{url} does not answer"), details
    assert current.returncode == 2, current.stdout + current.stderr


def test_shared_database_keeps_foreign_tables(
    postgres: PostgresServer, tmp_path: pathlib.Path
) -> None:
    """A database shared with another alembic-managed service: our migrations
    create our tables and our own version table, and touch nothing else."""
    import sqlalchemy as sa

    postgres.create_database("inspector_shared")
    url = postgres.url.rsplit("/", 1)[0] + "/inspector_shared"
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE other_things (id int primary key, v text)"))
        conn.execute(sa.text("INSERT INTO other_things VALUES (1, 'theirs')"))
        conn.execute(sa.text("CREATE TABLE alembic_version (version_num varchar(32))"))
        conn.execute(sa.text("INSERT INTO alembic_version VALUES ('f00dfeed')"))
    conf = tmp_path / "inspector.conf"
    conf.write_text(f"[database]\nconnection = {url}\n")
    result = subprocess.run(
        _command("ironic-inspector-dbsync", conf, "upgrade"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT v FROM other_things")).scalar() == "theirs"
        assert (
            conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
            == "f00dfeed"
        )
        tables = set(sa.inspect(conn).get_table_names())
    assert {"introspections", "rules", "ironic_inspector_alembic_version"} <= tables
    check = subprocess.run(
        _command("ironic-inspector-status", conf, "upgrade", "check", "--json"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    details = {c["check"]: c for c in json.loads(check.stdout)["checks"]}
    assert details["Database schema"]["result"] == 0, details
    engine.dispose()
