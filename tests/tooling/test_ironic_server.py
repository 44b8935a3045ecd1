"""lab/ironic_server: Ironic's schema is made once per Ironic virtualenv."""

import pathlib
import stat
import sys

from lab.servers.ironic import IronicServer

FAKE_DBSYNC = """#!{python}
import pathlib, re, sys
config = pathlib.Path(sys.argv[sys.argv.index("--config-file") + 1]).read_text()
database = re.search(r"^connection = sqlite:///(.+)$", config, re.M).group(1)
pathlib.Path(database).write_text("the schema")
with open({calls!r}, "a") as calls:
    calls.write("create_schema\\n")
"""


def _server(tmp_path: pathlib.Path, name: str) -> IronicServer:
    """An IronicServer whose virtualenv holds a stand-in ironic-dbsync
    that records each run."""
    server = IronicServer(tmp_path / "cache", tmp_path / name)
    server.venv = tmp_path / "venv"
    dbsync = server.venv / "bin" / "ironic-dbsync"
    if not dbsync.exists():
        dbsync.parent.mkdir(parents=True)
        calls = str(tmp_path / "calls")
        dbsync.write_text(FAKE_DBSYNC.format(python=sys.executable, calls=calls))
        dbsync.chmod(dbsync.stat().st_mode | stat.S_IEXEC)
    server.work_dir.mkdir(parents=True)
    server._write_config()
    return server


def _runs(tmp_path: pathlib.Path) -> int:
    calls = tmp_path / "calls"
    return len(calls.read_text().splitlines()) if calls.exists() else 0


def test_dbsync_runs_once_per_virtualenv_and_not_on_a_restart(
    tmp_path: pathlib.Path,
) -> None:
    first = _server(tmp_path, "first")
    first._create_schema()
    assert _runs(tmp_path) == 1
    assert (first.venv / "schema.sqlite").read_text() == "the schema"

    second = _server(tmp_path, "second")
    second._create_schema()
    assert _runs(tmp_path) == 1  # a copy of the first one's schema
    assert (second.work_dir / "ironic.sqlite").read_text() == "the schema"

    (first.work_dir / "ironic.sqlite").write_text("nodes enrolled since")
    first._create_schema()  # a restart keeps its database as it is
    assert _runs(tmp_path) == 1
    assert (first.work_dir / "ironic.sqlite").read_text() == "nodes enrolled since"
