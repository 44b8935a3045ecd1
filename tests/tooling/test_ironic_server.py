"""lab/servers/ironic.py: Ironic's schema is made once per Ironic
virtualenv; each release has a virtualenv and a configuration of its own,
and doc/upgrade.md names the releases the tests run."""

import pathlib
import stat
import sys

from lab.servers.ironic import RELEASES, IronicServer

ROOT = pathlib.Path(__file__).resolve().parents[2]

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


def _options(config: str) -> dict[str, dict[str, str]]:
    """The options of an ironic.conf, a later value winning (as in
    oslo.config, which merges a section written twice)."""
    options: dict[str, dict[str, str]] = {}
    section = options.setdefault("DEFAULT", {})
    for line in config.splitlines():
        if line.startswith("["):
            section = options.setdefault(line.strip("[]"), {})
        elif " = " in line:
            key, value = line.split(" = ", 1)
            section[key] = value
    return options


def test_release_32_1_has_its_venv_and_the_inspector_interface(
    tmp_path: pathlib.Path,
) -> None:
    server = IronicServer(
        tmp_path / "cache",
        tmp_path / "ironic",
        release="32.1",
        extra_config={
            "inspector": {"endpoint_override": "http://vm:5050"},
            "inventory": {"data_backend": "none"},
        },
    )
    assert server.venv == tmp_path / "cache" / "ironic-32.1-venv"
    assert server.requirement == "ironic==32.1.0 oslo.service==4.3.0"
    server.work_dir.mkdir()
    server._write_config()
    options = _options(server.config_file.read_text())
    assert options["DEFAULT"]["default_inspect_interface"] == "inspector"
    assert "inspector" in options["DEFAULT"]["enabled_inspect_interfaces"]
    assert options["inspector"] == {
        "require_managed_boot": "false",
        "status_check_period": "2",
        "endpoint_override": "http://vm:5050",
    }
    assert options["inventory"] == {"data_backend": "none"}  # the caller's wins

    default = IronicServer(tmp_path / "cache", tmp_path / "39", database_url="pg://")
    assert default.venv == tmp_path / "cache" / "ironic-pg-venv"
    assert default.requirement == "ironic==39.* psycopg2-binary"


def test_upgrade_guide_names_the_releases_tested() -> None:
    guide = (ROOT / "doc" / "upgrade.md").read_text()
    tested = guide.split("### The Ironic releases tested", 1)[1].split("\n### ")[0]
    for name, release in RELEASES.items():
        assert f"**Ironic {name}**" in tested
        for requirement in release.requirement.split():
            assert f"`{requirement}`" in tested
