"""ironic-inspector-status against a real PostgreSQL: the schema revision."""

import json
import pathlib
import subprocess
import sys

from inspector.lab.postgres_server import PostgresServer

BIN = pathlib.Path(sys.executable).parent


def _command(name: str, conf: pathlib.Path, *args: str) -> list[str]:
    return [str(BIN / name), "--config-file", str(conf), *args]


def test_schema_behind_and_current(
    postgres: PostgresServer, tmp_path: pathlib.Path
) -> None:
    postgres.create_database("inspector_status")
    url = postgres.url.rsplit("/", 1)[0] + "/inspector_status"
    conf = tmp_path / "inspector.conf"
    conf.write_text(
        "[DEFAULT]\nstandalone = False\ntransport_url = rabbit://127.0.0.1:5672/\n"
        f"[database]\nconnection = {url}\n"
        "[coordination]\nbackend_url = etcd3+http://127.0.0.1:2379\n")
    dbsync = ["ironic-inspector-dbsync", conf]
    subprocess.run(_command(*dbsync, "upgrade", "--revision", "0001"),
                   check=True, capture_output=True, timeout=120)
    check = _command("ironic-inspector-status", conf, "upgrade", "check", "--json")
    behind = subprocess.run(check, capture_output=True, text=True, timeout=120)
    assert behind.returncode == 2, behind.stdout + behind.stderr
    details = {c["check"]: c["details"] for c in json.loads(behind.stdout)["checks"]}
    from inspector.db import migration

    assert details["Database schema"].endswith(
        f"is at revision 0001, this release needs {migration.head()}: run "
        "ironic-inspector-dbsync upgrade"), details
    subprocess.run(_command(*dbsync, "upgrade"), check=True, capture_output=True,
                   timeout=120)
    current = subprocess.run(check, capture_output=True, text=True, timeout=120)
    assert current.returncode == 0, current.stdout + current.stderr
