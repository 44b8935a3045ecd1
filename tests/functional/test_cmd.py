"""The console scripts refuse bad configuration with one clear line."""

import json
import pathlib
import time

import pytest

from tests.functional.conftest import run_script as run


@pytest.mark.parametrize(
    "conf,fragment",
    [
        (
            "[processing]\nstore_data = swift\n",
            "[processing]store_data = swift is not available",
        ),
        ("[processing]\nadd_ports = some\n", "[processing]add_ports"),
        ("[DEFAULT]\nauth_strategy = ldap\n", "[DEFAULT]auth_strategy"),
        (
            "[DEFAULT]\nauth_strategy = http_basic\n"
            "http_basic_auth_user_file = /nonexistent/htpasswd\n",
            "http_basic_auth_user_file /nonexistent/htpasswd",
        ),
        ("[DEFAULT]\ntimeout = -5\n", "[DEFAULT]timeout"),
        ("[pxe_filter]\ndriver = ebtables\n", "[pxe_filter]driver"),
        ("[iptables]\nip_version = 5\n", "[iptables]ip_version"),
        (
            "[pxe_filter]\ndriver = iptables\n[iptables]\ndnsmasq_interface = br-nowhere\n",
            "[iptables]dnsmasq_interface br-nowhere is not an interface of this host",
        ),
        (
            "[pxe_filter]\ndriver = iptables\n[iptables]\nethoib_interfaces = ib0\n",
            "[iptables]ethoib_interfaces",
        ),
        (
            "[discovery]\nenabled_bmc_address_version = 4,5\n",
            "[discovery]enabled_bmc_address_version",
        ),
    ],
)
def test_bad_choice_stops_start_up(
    tmp_path: pathlib.Path, conf: str, fragment: str
) -> None:
    db = f"[database]\nconnection = sqlite:///{tmp_path}/db.sqlite\n"
    result = run(tmp_path, "ironic-inspector", conf + db)
    assert result.returncode == 2, result.stderr
    assert fragment in result.stderr
    assert "Traceback" not in result.stderr


def test_standalone_false_refused(tmp_path: pathlib.Path) -> None:
    result = run(tmp_path, "ironic-inspector", "[DEFAULT]\nstandalone = False\n")
    assert result.returncode == 2
    assert "standalone" in result.stderr and "Traceback" not in result.stderr


def test_unknown_hook_refused(tmp_path: pathlib.Path) -> None:
    conf = (
        f"[database]\nconnection = sqlite:///{tmp_path}/db.sqlite\n"
        "[processing]\nprocessing_hooks = scheduler,no_such_hook\n"
    )
    result = run(tmp_path, "ironic-inspector", conf)
    assert result.returncode == 2
    assert "no_such_hook" in result.stderr and "Traceback" not in result.stderr


def test_dbsync_upgrade_and_current(tmp_path: pathlib.Path) -> None:
    conf = f"[database]\nconnection = sqlite:///{tmp_path}/sub/db.sqlite\n"
    result = run(tmp_path, "ironic-inspector-dbsync", conf, "current")
    assert result.returncode == 0 and "none" in result.stdout
    result = run(tmp_path, "ironic-inspector-dbsync", conf, "upgrade")
    assert result.returncode == 0, result.stderr
    assert "eventlet" not in result.stderr.lower()  # threads only, everywhere
    result = run(tmp_path, "ironic-inspector-dbsync", conf, "current")
    from inspector.db import migration

    assert result.stdout.strip() == migration.head()


def test_dbsync_bad_url(tmp_path: pathlib.Path) -> None:
    result = run(
        tmp_path,
        "ironic-inspector-dbsync",
        "[database]\nconnection = nonsense\n",
        "upgrade",
    )
    assert result.returncode == 2
    assert "[database]connection" in result.stderr


SPLIT = (
    "[DEFAULT]\nstandalone = False\ntransport_url = rabbit://u:p@127.0.0.1:1/\n"
    "[coordination]\nbackend_url = etcd3+http://127.0.0.1:1\n"
    "[database]\nconnection = postgresql+psycopg2://u:p@127.0.0.1:1/x\n"
    "max_retries = 0\n"
)


@pytest.mark.parametrize(
    "script", ["ironic-inspector-conductor", "ironic-inspector-api-wsgi"]
)
def test_split_scripts_refuse_standalone(tmp_path: pathlib.Path, script: str) -> None:
    result = run(tmp_path, script, "[DEFAULT]\nstandalone = True\n")
    assert result.returncode == 2, result.stderr
    assert "standalone is True" in result.stderr
    assert "ironic-inspector " in result.stderr or "ironic-inspector (" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "script", ["ironic-inspector-conductor", "ironic-inspector-api-wsgi"]
)
@pytest.mark.parametrize(
    "old,new,fragment",
    [
        (
            "connection = postgresql+psycopg2://u:p@127.0.0.1:1/x",
            "connection = sqlite:////tmp/x.sqlite",
            "[database]connection is SQLite",
        ),
        (
            "transport_url = rabbit://u:p@127.0.0.1:1/",
            "transport_url = fake://",
            "[DEFAULT]transport_url is fake://",
        ),
        (
            "backend_url = etcd3+http://127.0.0.1:1",
            "backend_url = ",
            "[coordination]backend_url",
        ),
    ],
)
def test_split_refuses_unworkable_settings(
    tmp_path: pathlib.Path, script: str, old: str, new: str, fragment: str
) -> None:
    result = run(tmp_path, script, SPLIT.replace(old, new))
    assert result.returncode == 2, result.stderr
    assert fragment in result.stderr
    assert "Traceback" not in result.stderr
    assert "u:p@" not in result.stderr  # credentials stay out of messages


def test_split_unreachable_database_is_one_line(tmp_path: pathlib.Path) -> None:
    """Exit 1, not 2: a backend that is not up yet is worth a restart (the
    units prevent restarts only for 2, a configuration error). The line
    reaches the log file too, where a service's operator looks."""
    log_file = tmp_path / "conductor.log"
    conf = SPLIT.replace(
        "[DEFAULT]\n", f"[DEFAULT]\nlog_file = {log_file}\nuse_stderr = False\n"
    )
    result = run(tmp_path, "ironic-inspector-conductor", conf)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "u:p@" not in result.stderr
    assert "database" in result.stderr.lower()
    logged = log_file.read_text()
    assert "CRITICAL" in logged and "Cannot run:" in logged, logged
    assert "u:p@" not in logged and "Traceback" not in logged


def test_fatal_configuration_error_reaches_the_log_file(
    tmp_path: pathlib.Path,
) -> None:
    log_file = tmp_path / "conductor.log"
    conf = f"[DEFAULT]\nstandalone = True\nlog_file = {log_file}\n"
    result = run(tmp_path, "ironic-inspector-conductor", conf)
    assert result.returncode == 2, result.stderr
    assert "standalone is True" in result.stderr
    assert "standalone is True" in log_file.read_text()


def test_split_conductor_refuses_mdns(tmp_path: pathlib.Path) -> None:
    result = run(
        tmp_path,
        "ironic-inspector-conductor",
        SPLIT + "[DEFAULT]\nenable_mdns = true\n",
    )
    assert result.returncode == 2, result.stderr
    assert "[DEFAULT]enable_mdns is available in the standalone process only" in (
        result.stderr
    )


def test_split_waits_for_the_database_as_configured(tmp_path: pathlib.Path) -> None:
    # [database]max_retries and retry_interval, oslo.db's meaning upstream
    conf = SPLIT.replace("max_retries = 0", "max_retries = 2\nretry_interval = 1")
    started = time.monotonic()
    result = run(tmp_path, "ironic-inspector-conductor", conf)
    assert result.returncode == 1, result.stderr  # a backend, not the config
    assert time.monotonic() - started >= 2
    logged = result.stdout + result.stderr  # oslo.log's stream
    assert "retry 1 of 2 in 1 s" in logged
    assert "retry 2 of 2 in 1 s" in logged
    assert "retry 3" not in logged and "u:p@" not in logged


def test_upstream_defaults_apply_to_a_config_that_names_none(
    tmp_path: pathlib.Path,
) -> None:
    # ironic-inspector's defaults: the iptables PXE filter on br-ctlplane
    # (which this machine does not have) and Keystone; a config relying on
    # them stops at start, naming what to set
    db = f"[database]\nconnection = sqlite:///{tmp_path}/db.sqlite\n"
    result = run(tmp_path, "ironic-inspector", db, lab_defaults=False)
    assert result.returncode == 2, result.stderr
    assert (
        "[iptables]dnsmasq_interface br-ctlplane is not an interface of this host"
    ) in result.stderr
    noop = db + "[pxe_filter]\ndriver = noop\n"
    result = run(tmp_path, "ironic-inspector", noop, lab_defaults=False)
    assert result.returncode == 2, result.stderr
    assert "auth_strategy = keystone needs [keystone_authtoken]" in result.stderr
    assert "Traceback" not in result.stderr


def test_upstream_option_refused_and_typo_named(tmp_path: pathlib.Path) -> None:
    db = f"[database]\nconnection = sqlite:///{tmp_path}/db.sqlite\n"
    conf = db + "connection_trace = true\n[DEFAULT]\nuse_sll = true\n"
    result = run(tmp_path, "ironic-inspector", conf)
    assert result.returncode == 2, result.stderr
    assert "[database]connection_trace (" in result.stderr
    assert "connection_debug" in result.stderr
    assert "[DEFAULT]use_sll (" in result.stderr and "is not an option" in result.stderr
    assert "Traceback" not in result.stderr


def test_mdns_needs_a_tcp_listener(tmp_path: pathlib.Path) -> None:
    db = f"[database]\nconnection = sqlite:///{tmp_path}/db.sqlite\n"
    conf = db + "[DEFAULT]\nenable_mdns = true\nlisten_unix_socket = /run/x.sock\n"
    result = run(tmp_path, "ironic-inspector", conf)
    assert result.returncode == 2, result.stderr
    assert "[DEFAULT]enable_mdns needs a TCP listener" in result.stderr


JSON_RPC = SPLIT.replace(
    "[DEFAULT]\nstandalone = False\n",
    "[DEFAULT]\nstandalone = False\nrpc_transport = json-rpc\n",
)


@pytest.mark.parametrize(
    ("script", "options", "fragment"),
    [
        (
            "ironic-inspector-conductor",
            "[json_rpc]\nuse_ssl = True\ncert_file = /nonexistent/c.crt\n"
            "key_file = /nonexistent/c.key\n",
            "[json_rpc]cert_file /nonexistent/c.crt cannot be read",
        ),
        (
            "ironic-inspector-conductor",
            "[json_rpc]\nauth_strategy = http_basic\n"
            "http_basic_auth_user_file = {tmp}/htpasswd\n",
            "[json_rpc]http_basic_auth_user_file {tmp}/htpasswd line 1 is not "
            "user:bcrypt-hash",
        ),
        (
            "ironic-inspector-api-wsgi",
            "[json_rpc]\nauth_strategy = http_basic\n",
            "[json_rpc]auth_strategy = http_basic needs "
            "[json_rpc]http_basic_username and http_basic_password",
        ),
        (
            "ironic-inspector-conductor",
            "[DEFAULT]\nrpc_transport = zeromq\n",
            "rpc_transport",
        ),
    ],
)
def test_json_rpc_options_are_checked_before_connecting(
    tmp_path: pathlib.Path, script: str, options: str, fragment: str
) -> None:
    """Exit 2 and one line naming the option, before any backend is tried
    (the database and etcd of SPLIT do not exist: exit 1 otherwise)."""
    (tmp_path / "htpasswd").write_text("api:plaintext\n")
    conf = JSON_RPC + options.format(tmp=tmp_path)
    result = run(tmp_path, script, conf)
    assert result.returncode == 2, result.stderr
    assert fragment.format(tmp=tmp_path) in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        (
            "[pxe_filter]\ndriver = noop\n",
            "[pxe_filter]driver = noop: the PXE filter agent has nothing to do",
        ),
        (
            "[pxe_filter]\ndriver = dnsmasq\n"
            "[dnsmasq_pxe_filter]\ndhcp_hostsdir = /nonexistent/hostsdir\n",
            "[dnsmasq_pxe_filter]dhcp_hostsdir /nonexistent/hostsdir is not a "
            "directory",
        ),
        (
            "[pxe_filter]\ndriver = dnsmasq\ndeny_unknown_macs = True\n"
            "[processing]\nnode_not_found_hook = enroll\n",
            "deny_unknown_macs = True and [processing]node_not_found_hook",
        ),
    ],
)
def test_pxe_filter_agent_refuses_bad_configuration(
    tmp_path: pathlib.Path, options: str, fragment: str
) -> None:
    """Exit 2 and one line naming the option, before the database (which
    does not exist here) is tried."""
    result = run(tmp_path, "ironic-inspector-pxe-filter", SPLIT + options)
    assert result.returncode == 2, result.stderr
    assert fragment in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_unavailable_keystone_plugin_stops_start_up(tmp_path: pathlib.Path) -> None:
    # keystoneauth's kerberos plugin needs requests-kerberos, not installed
    db = f"[database]\nconnection = sqlite:///{tmp_path}/db.sqlite\n"
    conf = db + (
        "[DEFAULT]\nauth_strategy = keystone\n[keystone_authtoken]\n"
        "www_authenticate_uri = http://127.0.0.1:5000\nauth_type = v3kerberos\n"
        "memcache_security_strategy = ENCRYPT\n"
    )
    result = run(tmp_path, "ironic-inspector", conf)
    assert result.returncode == 2, result.stderr
    path = tmp_path / "inspector.conf"
    assert f"[keystone_authtoken]auth_type = v3kerberos ({path}) needs " in (
        result.stderr
    )
    assert "keystoneauth1[kerberos]" in result.stderr
    assert "needs [keystone_authtoken]memcache_secret_key" in result.stderr
    assert "Traceback" not in result.stderr


def test_inert_ironic_credentials_warn_at_start(tmp_path: pathlib.Path) -> None:
    db = f"[database]\nconnection = sqlite:///{tmp_path}/db.sqlite\n"
    conf = db + "[ironic]\nauth_type = none\nusername = inspector\n"
    conf += "[swift]\nusername = inspector\n"
    result = run(
        tmp_path, "ironic-inspector-status", conf, "upgrade", "check", "--json"
    )
    details = "\n".join(c["details"] for c in json.loads(result.stdout)["checks"])
    path = tmp_path / "inspector.conf"
    assert (
        f"[ironic]username ({path}) is not used by auth_type none: set "
        "auth_type = password or http_basic, or remove it"
    ) in details, result.stdout + result.stderr
    assert f"[swift]username ({path}) has no effect" in details
    assert "is not an option" not in details


def test_manage_output_into_head_ends_quietly(tmp_path: pathlib.Path) -> None:
    """``... | head`` closes the pipe before the command has written it
    all: no BrokenPipeError traceback, and the status says so (141, as a
    command SIGPIPE ended), which ``set -o pipefail`` shows."""
    import shlex
    import subprocess

    from inspector import bootstrap
    from tests.functional.conftest import BIN

    conf = f"[database]\nconnection = sqlite:///{tmp_path}/db.sqlite\n"
    rules = [
        {
            "description": f"rule {i} " + "x" * 200,  # ~400 kB of JSON in all
            "conditions": [{"op": "eq", "field": "cpu_arch", "value": f"arch{i}"}],
            "actions": [{"action": "add-trait", "name": f"CUSTOM_R{i}"}],
        }
        for i in range(1000)
    ]
    (tmp_path / "rules.json").write_text(json.dumps(rules))
    imported = run(
        tmp_path,
        "ironic-inspector-manage",
        conf,
        "rules",
        "import",
        "rules.json",
        cwd=tmp_path,
    )
    assert imported.returncode == 0, imported.stderr
    manage = shlex.join(
        [
            str(BIN / "ironic-inspector-manage"),
            "--config-file",
            str(tmp_path / "lab-defaults.conf"),
            "--config-file",
            str(tmp_path / "inspector.conf"),
        ]
    )
    for command in ("rules export", "rules export --format ironic"):
        piped = subprocess.run(
            ["bash", "-c", f"set -o pipefail; {manage} {command} | head -c 10"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert piped.stderr == "", piped.stderr
        assert piped.stdout == "[\n  {\n    ", piped.stdout
        assert piped.returncode == bootstrap.PIPE_CLOSED
