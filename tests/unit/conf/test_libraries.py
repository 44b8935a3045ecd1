"""Library features the options turn on are checked at start-up: a missing
optional package (simulated by hiding its module), file or setting stops
the process naming the option, its file and what to do."""

import pathlib
import sys

import pytest
from oslo_config import cfg

from inspector import bootstrap, exceptions
from inspector.conf import libraries, opts

KEYSTONE = "[DEFAULT]\nauth_strategy = keystone\n"
AUTHTOKEN = (
    "[keystone_authtoken]\n"
    "www_authenticate_uri = http://keystone.example:5000\n"
    "auth_url = http://keystone.example:5000\n"
    "auth_type = password\n"
    "username = ironic-inspector\n"
    "password = secret-password\n"
    "memcached_servers = 127.0.0.1:11211\n"
)
SPLIT = (
    "[DEFAULT]\nstandalone = False\nrpc_transport = oslo\n"
    "transport_url = rabbit://inspector:bus-password@127.0.0.1:5672/\n"
    "[coordination]\nbackend_url = etcd3+http://127.0.0.1:2379\n"
)


def _conf(tmp_path: pathlib.Path, text: str) -> tuple[cfg.ConfigOpts, str]:
    path = tmp_path / "inspector.conf"
    path.write_text(text)
    conf = bootstrap.parse_config(["--config-file", str(path)], cfg.ConfigOpts())
    return conf, str(path)


def _refusal(tmp_path: pathlib.Path, text: str) -> str:
    conf, _ = _conf(tmp_path, text)
    with pytest.raises(exceptions.ConfigError) as caught:
        libraries.check(conf)
    return str(caught.value)


def _hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make ``import module`` fail as it does when its package is missing."""
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)


@pytest.mark.parametrize("strategy", ["None", "MAC", "ENCRYPT", "encrypt"])
def test_kolla_settings_pass_with_the_declared_dependencies(
    tmp_path: pathlib.Path, strategy: str
) -> None:
    text = (
        KEYSTONE
        + AUTHTOKEN
        + (f"memcache_security_strategy = {strategy}\nmemcache_secret_key = s3cret\n")
    )
    conf, _ = _conf(tmp_path, text)
    assert libraries.check(conf) == []


def test_encrypt_without_cryptography_is_refused(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hide(monkeypatch, "cryptography.hazmat.primitives.ciphers")
    text = (
        KEYSTONE
        + AUTHTOKEN
        + ("memcache_security_strategy = ENCRYPT\nmemcache_secret_key = s3cret\n")
    )
    message = _refusal(tmp_path, text)
    path = tmp_path / "inspector.conf"
    assert f"[keystone_authtoken]memcache_security_strategy = ENCRYPT ({path})" in (
        message
    )
    assert "cryptography" in message and "memcache-encryption" in message
    assert "set memcache_security_strategy = MAC" in message
    assert "s3cret" not in message


def test_mac_needs_no_cryptography(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hide(monkeypatch, "cryptography.hazmat.primitives.ciphers")
    text = (
        KEYSTONE
        + AUTHTOKEN
        + ("memcache_security_strategy = MAC\nmemcache_secret_key = s3cret\n")
    )
    conf, _ = _conf(tmp_path, text)
    assert libraries.check(conf) == []


def test_strategy_without_secret_key_is_refused(tmp_path: pathlib.Path) -> None:
    message = _refusal(
        tmp_path, KEYSTONE + AUTHTOKEN + "memcache_security_strategy = MAC\n"
    )
    assert "memcache_security_strategy = MAC" in message
    assert "needs [keystone_authtoken]memcache_secret_key" in message


def test_unknown_strategy_is_refused(tmp_path: pathlib.Path) -> None:
    text = KEYSTONE + AUTHTOKEN + "memcache_security_strategy = AES\n"
    assert "is not one of None, MAC or ENCRYPT" in _refusal(tmp_path, text)


def test_memcached_servers_need_python_memcached(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hide(monkeypatch, "memcache")
    # upstream's deprecated spelling is named as the file writes it
    text = KEYSTONE + AUTHTOKEN.replace("memcached_servers", "memcache_servers")
    message = _refusal(tmp_path, text)
    assert "[keystone_authtoken]memcache_servers = 127.0.0.1:11211" in message
    assert "python-memcached" in message


def test_sasl_needs_binary_memcached(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hide(monkeypatch, "bmemcached")
    text = KEYSTONE + AUTHTOKEN + "memcache_sasl_enabled = true\n"
    message = _refusal(tmp_path, text)
    assert "[keystone_authtoken]memcache_sasl_enabled = true" in message
    assert "python-binary-memcached" in message


def test_memcache_tls_files_must_exist(tmp_path: pathlib.Path) -> None:
    text = (
        KEYSTONE
        + AUTHTOKEN
        + ("memcache_tls_enabled = true\nmemcache_tls_cafile = /nonexistent/ca.pem\n")
    )
    message = _refusal(tmp_path, text)
    assert "memcache_tls_cafile = /nonexistent/ca.pem" in message
    assert "cannot be read" in message


def test_keystone_checks_only_when_keystone_is_used(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hide(monkeypatch, "cryptography.hazmat.primitives.ciphers", "memcache")
    text = "[DEFAULT]\nauth_strategy = noauth\n" + AUTHTOKEN
    conf, _ = _conf(tmp_path, text + "memcache_security_strategy = ENCRYPT\n")
    assert libraries.check(conf) == []


def test_json_rpc_keystone_uses_keystonemiddleware(tmp_path: pathlib.Path) -> None:
    text = (
        "[DEFAULT]\nstandalone = False\nrpc_transport = json-rpc\n"
        "auth_strategy = noauth\n[json_rpc]\nauth_strategy = keystone\n"
    )
    conf, _ = _conf(tmp_path, text + AUTHTOKEN)
    assert libraries.uses_keystonemiddleware(conf)
    conf, _ = _conf(tmp_path, text.replace("keystone\n", "noauth\n"))
    assert not libraries.uses_keystonemiddleware(conf)


def test_unavailable_auth_plugin_names_its_extra(tmp_path: pathlib.Path) -> None:
    # keystoneauth's kerberos plugin exists only with requests-kerberos,
    # which this service does not install
    text = KEYSTONE + AUTHTOKEN.replace(
        "auth_type = password", "auth_type = v3kerberos"
    )
    message = _refusal(tmp_path, text)
    assert "[keystone_authtoken]auth_type = v3kerberos" in message
    assert "keystoneauth1[kerberos]" in message


def test_unknown_auth_plugin_lists_the_known(tmp_path: pathlib.Path) -> None:
    text = KEYSTONE + AUTHTOKEN.replace("auth_type = password", "auth_type = passwd")
    message = _refusal(tmp_path, text)
    assert "auth_type = passwd" in message
    assert "is not a keystoneauth plugin: use one of" in message
    assert "v3applicationcredential" in message


def test_auth_section_is_followed(tmp_path: pathlib.Path) -> None:
    text = (
        KEYSTONE
        + "[keystone_authtoken]\nauth_section = service_user\n"
        + "www_authenticate_uri = http://keystone.example:5000\n"
        + "[service_user]\nauth_plugin = v3oauth1\n"
    )
    message = _refusal(tmp_path, text)
    assert "[service_user]auth_plugin = v3oauth1" in message
    assert "keystoneauth1[oauth1]" in message


def test_ironic_auth_plugin_is_checked(tmp_path: pathlib.Path) -> None:
    message = _refusal(tmp_path, "[ironic]\nauth_type = v3fedkerb\n")
    assert "[ironic]auth_type = v3fedkerb" in message


def test_missing_ca_bundle_is_refused(tmp_path: pathlib.Path) -> None:
    text = KEYSTONE + AUTHTOKEN + "cafile = /nonexistent/keystone-ca.pem\n"
    message = _refusal(tmp_path, text)
    assert "[keystone_authtoken]cafile = /nonexistent/keystone-ca.pem" in message


def test_split_oslo_messaging_defaults_pass(tmp_path: pathlib.Path) -> None:
    conf, _ = _conf(tmp_path, SPLIT)
    assert libraries.check(conf) == []


@pytest.mark.parametrize(
    "url,fragment",
    [
        ("kafka://127.0.0.1:9092", "notifications only"),
        ("amqp://127.0.0.1:5672", "names no oslo.messaging RPC driver"),
    ],
)
def test_transport_without_rpc_driver_is_refused(
    tmp_path: pathlib.Path, url: str, fragment: str
) -> None:
    text = SPLIT.replace(
        "rabbit://inspector:bus-password@127.0.0.1:5672/",
        url.replace("://", "://inspector:bus-password@"),
    )
    message = _refusal(tmp_path, text)
    assert fragment in message
    assert "[DEFAULT]transport_url = " in message
    assert "bus-password" not in message  # credentials stay out of logs


def test_standalone_ignores_messaging_options(tmp_path: pathlib.Path) -> None:
    text = "[DEFAULT]\ntransport_url = kafka://h\n[oslo_messaging_rabbit]\n"
    conf, _ = _conf(tmp_path, text + "kombu_compression = zstd\n")
    assert libraries.check(conf) == []


def test_rabbit_options_are_checked(tmp_path: pathlib.Path) -> None:
    text = SPLIT + (
        "[oslo_messaging_rabbit]\nssl = true\nssl_ca_file = /nonexistent/ca.pem\n"
        "kombu_compression = no-such-codec\n"
    )
    message = _refusal(tmp_path, text)
    assert "[oslo_messaging_rabbit]ssl_ca_file = /nonexistent/ca.pem" in message
    assert "[oslo_messaging_rabbit]kombu_compression = no-such-codec" in message
    conf, _ = _conf(
        tmp_path, SPLIT + "[oslo_messaging_rabbit]\nkombu_compression = gzip\n"
    )
    assert libraries.check(conf) == []


def test_pxe_filter_agent_skips_the_broker_and_coordination(
    tmp_path: pathlib.Path,
) -> None:
    """The agent reads the cluster's file but uses neither backend: a
    broker CA that only the conductors' hosts have must not stop it."""
    text = SPLIT.replace("etcd3+http", "zookeeper") + (
        "[oslo_messaging_rabbit]\nssl = true\nssl_ca_file = /nonexistent/ca.pem\n"
    )
    conf, _ = _conf(tmp_path, text)
    assert libraries.check(conf, cluster=False) == []
    with pytest.raises(exceptions.ConfigError):
        libraries.check(conf)


def test_tracing_needs_its_exporter(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hide(monkeypatch, "opentelemetry.exporter.otlp.proto.grpc")
    text = (
        SPLIT
        + "[oslo_messaging_tracing]\ntracing_enabled = true\notlp_protocol = grpc\n"
    )
    message = _refusal(tmp_path, text)
    assert "[oslo_messaging_tracing]tracing_enabled = true" in message
    assert "oslo.messaging[tracing-grpc]" in message


def test_metrics_without_collector_warn(tmp_path: pathlib.Path) -> None:
    socket_file = tmp_path / "collector.sock"
    text = SPLIT + (
        f"[oslo_messaging_metrics]\nmetrics_enabled = true\n"
        f"metrics_socket_file = {socket_file}\n"
    )
    conf, _ = _conf(tmp_path, text)
    (warning,) = libraries.check(conf)
    assert "[oslo_messaging_metrics]metrics_enabled = true" in warning
    assert str(socket_file) in warning
    socket_file.touch()
    assert libraries.check(conf) == []


@pytest.mark.parametrize(
    "url,module,package",
    [
        ("memcached://127.0.0.1:11211", "pymemcache", "pymemcache"),
        ("redis://127.0.0.1:6379", "redis", "redis"),
        ("etcd3+http://127.0.0.1:2379", "etcd3gw", "etcd3gw"),
    ],
)
def test_coordination_backend_needs_its_client(
    tmp_path: pathlib.Path,
    monkeypatch: pytest.MonkeyPatch,
    url: str,
    module: str,
    package: str,
) -> None:
    _hide(monkeypatch, module)
    text = SPLIT.replace("etcd3+http://127.0.0.1:2379", url)
    message = _refusal(tmp_path, text)
    assert "[coordination]backend_url" in message
    assert f"needs the Python package {package}" in message


def test_policy_file_not_found_warns(tmp_path: pathlib.Path) -> None:
    conf, _ = _conf(tmp_path, "[oslo_policy]\npolicy_file = /nonexistent/policy.yaml\n")
    (warning,) = libraries.check(conf)
    assert "[oslo_policy]policy_file = /nonexistent/policy.yaml" in warning
    assert "the default rules apply" in warning


def test_policy_file_that_does_not_parse_is_refused(tmp_path: pathlib.Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text('"introspection:start": [\n')
    message = _refusal(tmp_path, f"[oslo_policy]\npolicy_file = {policy}\n")
    assert f"[oslo_policy]policy_file = {policy}" in message
    assert "cannot be read as YAML" in message
    policy.write_text('"introspection:start": "role:admin"\n')
    conf, _ = _conf(tmp_path, f"[oslo_policy]\npolicy_file = {policy}\n")
    assert libraries.check(conf) == []


def test_judge_runs_the_library_checks(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hide(monkeypatch, "cryptography.hazmat.primitives.ciphers")
    text = (
        KEYSTONE
        + AUTHTOKEN
        + ("memcache_security_strategy = ENCRYPT\nmemcache_secret_key = s3cret\n")
    )
    conf, _ = _conf(tmp_path, text)
    with pytest.raises(exceptions.ConfigError, match="cryptography"):
        opts.judge(conf)


def test_remote_policy_check_files_must_exist(tmp_path: pathlib.Path) -> None:
    text = "[oslo_policy]\nremote_ssl_ca_crt_file = /nonexistent/policy-ca.pem\n"
    message = _refusal(tmp_path, text)
    assert "[oslo_policy]remote_ssl_ca_crt_file = /nonexistent/policy-ca.pem" in message
    assert "cannot be read" in message
