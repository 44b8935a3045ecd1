"""ironic-inspector-status upgrade check, run as operators run it."""

import json
import pathlib
import subprocess
import sys

import pytest

from inspector.cmd import status
from tests.functional.conftest import run_script

BIN = pathlib.Path(sys.executable).parent


def _run(
    tmp_path: pathlib.Path, text: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    return run_script(
        tmp_path,
        "ironic-inspector-status",
        text,
        "upgrade",
        "check",
        *extra,
        cwd=tmp_path,
    )


def _details(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """Check name -> details, from the --json output."""
    checks = json.loads(result.stdout)["checks"]
    return {c["check"]: c["details"] for c in checks}


def test_current_standalone_is_ready(tmp_path: pathlib.Path) -> None:
    db = tmp_path / "inspector.sqlite"
    text = f"[database]\nconnection = sqlite:///{db}\n"
    (tmp_path / "c.conf").write_text(text)
    subprocess.run(
        [
            str(BIN / "ironic-inspector-dbsync"),
            "--config-file",
            str(tmp_path / "c.conf"),
            "upgrade",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    result = _run(tmp_path, text)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Result: Success" in result.stdout
    assert "Failure" not in result.stdout and "Warning" not in result.stdout


def test_split_with_sqlite_and_a_missing_driver_fails(tmp_path: pathlib.Path) -> None:
    result = _run(
        tmp_path,
        (
            "[DEFAULT]\nstandalone = False\n"
            f"[database]\nconnection = sqlite:///{tmp_path}/x.sqlite\n"
            "[coordination]\nbackend_url = zookeeper://127.0.0.1:2181\n"
        ),
        "--json",
    )
    assert result.returncode == 2, result.stdout
    details = _details(result)
    assert "[database]connection is SQLite" in details["Split mode backends"]
    assert "needs the Python library 'kazoo'" in details["Coordination driver"]


@pytest.mark.parametrize(
    "scheme,code",
    [
        ("etcd3+http", status.Code.SUCCESS),
        ("file", status.Code.SUCCESS),
        ("nosuchdriver", status.Code.FAILURE),
    ],
)
def test_driver_library(scheme: str, code: status.Code) -> None:
    assert status.driver_library(scheme).code == code


def test_unreachable_database_is_a_failure_naming_it(tmp_path: pathlib.Path) -> None:
    result = _run(
        tmp_path,
        (
            "[DEFAULT]\nstandalone = False\ntransport_url = rabbit://127.0.0.1:1/\n"
            "[database]\nconnection = "
            "postgresql+psycopg2://inspector:secret@127.0.0.1:1/inspector\n"
            "[coordination]\nbackend_url = file:///tmp/x\n"
        ),
        "--json",
    )
    assert result.returncode == 2
    details = _details(result)
    assert details["Database schema"].startswith(
        "postgresql+psycopg2://inspector:***@127.0.0.1:1/inspector: The database "
        "is unreachable: "
    )
    assert "secret" not in result.stdout
    assert "file://" in details["Split mode backends"]  # a warning


def test_bad_config_file_is_named(tmp_path: pathlib.Path) -> None:
    result = subprocess.run(
        [
            str(BIN / "ironic-inspector-status"),
            "--config-file",
            str(tmp_path / "missing.conf"),
            "upgrade",
            "check",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert str(tmp_path / "missing.conf") in result.stderr


def test_upstream_options_are_judged(tmp_path: pathlib.Path) -> None:
    # what a refused or warned option does to a start, the check says first
    db = f"[database]\nconnection = sqlite:///{tmp_path}/inspector.sqlite\n"
    warned = _run(tmp_path, db + "[DEFAULT]\nrootwrap_config = /etc/r.conf\n", "--json")
    assert warned.returncode == 1, warned.stdout + warned.stderr
    assert "[DEFAULT]rootwrap_config" in _details(warned)["Configuration"]
    refused = _run(tmp_path, db + "connection_trace = true\n", "--json")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "[database]connection_trace" in _details(refused)["Configuration"]
