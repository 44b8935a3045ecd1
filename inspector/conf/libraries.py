"""Start-up checks of what the libraries' options turn on.

An option a library reads (``upstream.LIBRARY`` in the upstream table, and
the keystoneauth plugins of ``[ironic]``) may turn on a feature that needs
an optional Python package, a file or a well-formed document. Without the
check the process starts and every request that reaches the feature fails
(keystonemiddleware's ``CryptoUnavailableError`` on every authenticated
request, with ``memcache_security_strategy = ENCRYPT`` and no
``cryptography``). Here each such option is checked once, when the
configuration turns the feature on; a refusal names the option, the file
that set it, what is missing and what to do. Optional packages are
imported only when their option is set, so nothing here slows a process
that does not use them.
"""

import importlib
import os
import urllib.parse
from typing import Any

from oslo_config import cfg, types

from inspector import exceptions
from inspector.conf import upstream

AUTHTOKEN = "keystone_authtoken"

PLUGIN_EXTRAS = {
    "v3kerberos": "keystoneauth1[kerberos] (requests-kerberos)",
    "v3fedkerb": "keystoneauth1[kerberos] (requests-kerberos)",
    "v3oauth1": "keystoneauth1[oauth1] (oauthlib)",
}
"""keystoneauth plugins that exist only with an optional package."""

RPC_SCHEMES = ("rabbit", "kombu")
"""transport_url schemes of oslo.messaging's RPC driver (RabbitMQ, through
kombu, a dependency of oslo.messaging); Kafka carries notifications only."""

TRACING_EXPORTERS = {
    "http/protobuf": (
        "opentelemetry.exporter.otlp.proto.http",
        "oslo.messaging[tracing-http]",
    ),
    "grpc": ("opentelemetry.exporter.otlp.proto.grpc", "oslo.messaging[tracing-grpc]"),
}

COORDINATION_CLIENTS = {
    "etcd3+http": ("etcd3gw", "etcd3gw"),
    "etcd3+https": ("etcd3gw", "etcd3gw"),
    "redis": ("redis", "redis"),
    "memcached": ("pymemcache", "pymemcache"),
    "zookeeper": ("kazoo", "kazoo"),
    "kazoo": ("kazoo", "kazoo"),
    "mysql": ("pymysql", "PyMySQL"),
    "postgresql": ("psycopg2", "psycopg2"),
}
"""tooz backends by URL scheme: the client module its driver imports, and
the package that brings it (file:// needs none)."""

Settings = dict[tuple[str, str], upstream.Setting]


def importable(module: str) -> bool:
    """Whether ``module`` imports (the way the library will import it)."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


class Findings:
    """What the checks found: refusals stop the process, warnings are logged."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.refusals: list[str] = []
        self.warnings: list[str] = []

    def value(self, group: str, name: str) -> str | None:
        found = self.settings.get((group, name))
        return found.value if found is not None else None

    def flag(self, group: str, name: str) -> bool:
        value = self.value(group, name)
        try:
            return bool(value) and bool(types.Boolean()(value))
        except ValueError:
            return False  # the library names a bad boolean itself

    def where(self, group: str, name: str) -> str:
        found = self.settings.get((group, name))
        if found is None:
            return f"[{group}]{name}"
        return f"[{group}]{found.name} = {_shown(name, found.value)} ({found.path})"

    def refuse(self, group: str, name: str, message: str) -> None:
        self.refusals.append(f"{self.where(group, name)} {message}")

    def warn(self, group: str, name: str, message: str) -> None:
        self.warnings.append(f"{self.where(group, name)} {message}")

    def needs_file(self, group: str, name: str, what: str) -> None:
        path = self.value(group, name)
        if path and not os.access(path, os.R_OK):
            self.refuse(
                group,
                name,
                f"names {what} that cannot be read: correct the path, or "
                "remove the option",
            )


def _shown(name: str, value: str) -> str:
    """``value`` as a message may show it: URLs without credentials."""
    if "password" in name or "secret" in name:
        return "(hidden)"
    if name.endswith("_url") and "://" in value:
        return urllib.parse.urlsplit(value).scheme + "://..."
    return value


def uses_keystonemiddleware(conf: cfg.ConfigOpts) -> bool:
    """The API's ``auth_strategy``, or the JSON-RPC endpoints' (which
    follows ``[DEFAULT]`` when no file sets it), is keystone."""
    if conf.auth_strategy == "keystone":
        return True
    if conf.standalone or conf.rpc_transport != "json-rpc":
        return False
    location = conf.get_location("auth_strategy", "json_rpc")
    if location is not None and location.location == cfg.Locations.opt_default:
        return False  # follows [DEFAULT]auth_strategy, which is not keystone
    return bool(conf.json_rpc.auth_strategy == "keystone")


def plugin_problem(name: str) -> str | None:
    """What is wrong with keystoneauth plugin ``name``, or None."""
    from keystoneauth1 import exceptions as ks_exceptions
    from keystoneauth1 import loading

    try:
        loader: Any = loading.get_plugin_loader(name)
    except ks_exceptions.NoMatchingPlugin:
        known = ", ".join(upstream.available_plugins())
        return f"is not a keystoneauth plugin: use one of {known}"
    if not loader.available:
        package = PLUGIN_EXTRAS.get(name, "the optional packages keystoneauth1 names")
        return (
            f"needs {package}, which is not installed: install it, or choose "
            "another auth_type (password, v3applicationcredential, ...)"
        )
    return None


def _auth_plugin(found: Findings, group: str) -> None:
    section = found.value(group, "auth_section") or group
    name = found.value(section, "auth_type") or found.value(section, "auth_plugin")
    if name:
        problem = plugin_problem(name)
        if problem:
            key = "auth_type" if found.value(section, "auth_type") else "auth_plugin"
            found.refuse(section, key, problem)


def _memcache_strategy(found: Findings) -> None:
    strategy = (found.value(AUTHTOKEN, "memcache_security_strategy") or "").upper()
    if strategy in ("", "NONE"):
        return
    if strategy not in ("MAC", "ENCRYPT"):
        found.refuse(
            AUTHTOKEN,
            "memcache_security_strategy",
            "is not one of None, MAC or ENCRYPT: choose one (ENCRYPT to keep "
            "tokens unreadable in memcached)",
        )
        return
    if not found.value(AUTHTOKEN, "memcache_secret_key"):
        found.refuse(
            AUTHTOKEN,
            "memcache_security_strategy",
            "needs [keystone_authtoken]memcache_secret_key: set it (the same "
            "secret on every host sharing the memcached), or remove "
            "memcache_security_strategy",
        )
    if strategy == "ENCRYPT" and not importable(
        "cryptography.hazmat.primitives.ciphers"
    ):
        found.refuse(
            AUTHTOKEN,
            "memcache_security_strategy",
            "needs the Python package cryptography (keystonemiddleware"
            "[memcache-encryption]), which is not installed: install it, or "
            "set memcache_security_strategy = MAC",
        )


def _memcached_client(found: Findings) -> None:
    if not found.value(AUTHTOKEN, "memcached_servers"):
        return
    for option in ("memcache_sasl_enabled", "memcache_tls_enabled"):
        if found.flag(AUTHTOKEN, option) and not importable("bmemcached"):
            found.refuse(
                AUTHTOKEN,
                option,
                "needs the Python package python-binary-memcached, which is "
                "not installed: install it, or set it to false",
            )
            return
    if not importable("memcache"):
        found.refuse(
            AUTHTOKEN,
            "memcached_servers",
            "needs the Python package python-memcached, which is not "
            "installed: install it, or remove memcached_servers (tokens are "
            "then cached in each process)",
        )
    if found.flag(AUTHTOKEN, "memcache_tls_enabled"):
        for option in ("memcache_tls_cafile", "memcache_tls_certfile"):
            found.needs_file(AUTHTOKEN, option, "a certificate file")
        found.needs_file(AUTHTOKEN, "memcache_tls_keyfile", "a key file")


def _keystone(found: Findings) -> None:
    _auth_plugin(found, AUTHTOKEN)
    _memcache_strategy(found)
    _memcached_client(found)
    found.needs_file(AUTHTOKEN, "cafile", "a CA bundle")
    found.needs_file(AUTHTOKEN, "certfile", "a certificate file")
    found.needs_file(AUTHTOKEN, "keyfile", "a key file")


def _messaging(conf: cfg.ConfigOpts, found: Findings) -> None:
    url = found.value("DEFAULT", "transport_url") or ""
    scheme = urllib.parse.urlsplit(url).scheme.split("+", 1)[0]
    if scheme == "kafka":
        found.refuse(
            "DEFAULT",
            "transport_url",
            "is Kafka, which oslo.messaging offers for notifications only, "
            "not RPC: use a rabbit:// URL, or rpc_transport = json-rpc",
        )
    elif scheme and scheme not in (*RPC_SCHEMES, "fake"):
        found.refuse(
            "DEFAULT",
            "transport_url",
            "names no oslo.messaging RPC driver: use a rabbit:// URL "
            "(RabbitMQ), or rpc_transport = json-rpc",
        )
    rabbit = "oslo_messaging_rabbit"
    found.needs_file(rabbit, "ssl_ca_file", "a CA bundle")
    found.needs_file(rabbit, "ssl_cert_file", "a certificate file")
    found.needs_file(rabbit, "ssl_key_file", "a key file")
    compression = found.value(rabbit, "kombu_compression")
    if compression:
        from kombu import compression as kombu_compression

        try:
            kombu_compression.get_encoder(compression)
        except KeyError:
            found.refuse(
                rabbit,
                "kombu_compression",
                "is not a compression kombu has here (gzip, bz2 and lzma are "
                "built in; zstd, brotli and snappy need their own Python "
                "package): correct it, install its package, or remove it",
            )
    tracing = "oslo_messaging_tracing"
    if found.flag(tracing, "tracing_enabled"):
        protocol = found.value(tracing, "otlp_protocol") or "http/protobuf"
        exporter = TRACING_EXPORTERS.get(protocol)
        if exporter is None:
            found.refuse(tracing, "otlp_protocol", "is not http/protobuf or grpc")
        elif not importable(exporter[0]):
            found.refuse(
                tracing,
                "tracing_enabled",
                f"needs {exporter[1]} (OpenTelemetry's OTLP exporter), which "
                "is not installed: install it, or set tracing_enabled = false",
            )
    metrics = "oslo_messaging_metrics"
    if found.flag(metrics, "metrics_enabled"):
        socket_file = (
            found.value(metrics, "metrics_socket_file")
            or "/var/tmp/metrics_collector.sock"
        )
        if not os.path.exists(socket_file):
            found.warn(
                metrics,
                "metrics_enabled",
                f"sends to {socket_file}, where no oslo.metrics collector "
                "listens now: start the collector, or RPC metrics are lost",
            )


def _coordination(conf: cfg.ConfigOpts, found: Findings) -> None:
    url = conf.coordination.backend_url or ""
    scheme = urllib.parse.urlsplit(url).scheme
    client = COORDINATION_CLIENTS.get(scheme)
    if client is not None and not importable(client[0]):
        found.refusals.append(
            f"[coordination]backend_url ({scheme}://) needs the Python package "
            f"{client[1]}, which is not installed: install it, or use etcd "
            "(etcd3+http://), whose client is installed with this service"
        )


def _policy_files(conf: cfg.ConfigOpts, found: Findings) -> None:
    import yaml

    group = "oslo_policy"
    # read when a rule is an http(s):// check
    found.needs_file(group, "remote_ssl_ca_crt_file", "a CA bundle")
    found.needs_file(group, "remote_ssl_client_crt_file", "a certificate file")
    found.needs_file(group, "remote_ssl_client_key_file", "a key file")
    name = found.value(group, "policy_file")
    if not name:
        return
    path = name if os.path.isabs(name) else conf.find_file(name)
    if not path or not os.path.exists(path):
        found.warn(
            group,
            "policy_file",
            "is not found: the default rules apply (as oslo.policy does); "
            "correct the path, or remove the option",
        )
        return
    try:
        with open(path, encoding="utf-8") as document:
            rules = yaml.safe_load(document)
    except (OSError, yaml.YAMLError) as exc:
        detail = exceptions.first_line(exc)
        found.refuse(group, "policy_file", f"cannot be read as YAML: {detail}")
        return
    if rules is not None and not isinstance(rules, dict):
        found.refuse(group, "policy_file", "is not a mapping of rule names to rules")


def check(conf: cfg.ConfigOpts, cluster: bool = True) -> list[str]:
    """Check every library feature the configuration turns on.

    ``cluster`` is False for a process that uses neither the message
    broker nor the coordination backend (the PXE filter agent): their
    options are not its business, and the files they name may not exist on
    its host. Returns the warnings to log once; raises ConfigError naming
    each option whose feature cannot work, with what to do.
    """
    found = Findings(upstream.file_settings(conf))
    if uses_keystonemiddleware(conf):
        _keystone(found)
    _auth_plugin(found, "ironic")
    if cluster and not conf.standalone:
        if conf.rpc_transport == "oslo":
            _messaging(conf, found)
        _coordination(conf, found)
    _policy_files(conf, found)
    if found.refusals:
        raise exceptions.ConfigError(
            "Invalid configuration: " + "\n".join(found.refusals)
        )
    return found.warnings
