"""Keystone authentication with keystonemiddleware's token cache in a real
memcached, configured as Kolla-Ansible's ironic-inspector.conf writes it.

The standalone ``ironic-inspector`` validates tokens against a Keystone
stand-in (``lab/keystone_standin.py``: the service user's password
authentication, discovery and ``GET /v3/auth/tokens``) and caches the
answers in a memcached of its own. For each
``memcache_security_strategy`` (None, MAC, ENCRYPT): a valid token gets
200, twice, with one validation (the second answer came from memcached);
a bad token 401; and what memcached holds is read back with the
memcached protocol: plain JSON with None, signed entries with MAC,
signed and encrypted ones with ENCRYPT. Once more with ENCRYPT under
Apache (mod_wsgi daemon processes, the split API), where two processes
share the cache.
"""

import base64
import hashlib
import hmac
import json
import pathlib
from collections.abc import Iterator

import pytest
import requests

from lab.servers import loopback
from lab.servers.inspector import InspectorServer
from lab.servers.keystone_standin import KeystoneStandin
from lab.servers.memcached import MemcachedServer
from lab.servers.postgres import PostgresServer
from lab.servers.split_cluster import SplitCluster

SECRET = "kolla-rendered-secret-key"
USER = "operator-alice"


@pytest.fixture(scope="module")
def memcached(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemcachedServer]:
    server = MemcachedServer(tmp_path_factory.mktemp("memcached"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def keystone() -> Iterator[KeystoneStandin]:
    standin = KeystoneStandin("ironic-inspector", "inspector-service-password")
    standin.start()
    yield standin
    standin.stop()


def kolla_authtoken(
    keystone: KeystoneStandin, memcached: MemcachedServer, strategy: str | None
) -> dict[str, str]:
    """``[keystone_authtoken]`` as Kolla-Ansible's template renders it."""
    section = {
        "www_authenticate_uri": keystone.url,
        "auth_url": keystone.url,
        "auth_type": "password",
        "project_domain_id": "default",
        "user_domain_id": "default",
        "project_name": "service",
        "username": keystone.username,
        "password": keystone.password,
        "memcached_servers": memcached.address,
    }
    if strategy is not None:
        section["memcache_security_strategy"] = strategy
        section["memcache_secret_key"] = SECRET
    return section


def _keys(token: str, strategy: str) -> dict[str, bytes]:
    """keystonemiddleware's key derivation (NIST SP 800-108 on HMAC-SHA384)."""
    digest = hmac.new(
        SECRET.encode(), token.encode() + strategy.encode(), hashlib.sha384
    ).digest()
    return {"mac": digest[16:32], "encryption": digest[32:]}


def _signed_payload(value: bytes, tokens: list[str], strategy: str) -> bytes:
    """The base64-decoded payload of ``value`` once its HMAC checks out
    under the key of one of ``tokens``; fails when none does."""
    signature, payload = value[:64], value[64:]
    for token in tokens:
        mac_key = _keys(token, strategy)["mac"]
        expected = base64.b64encode(hmac.new(mac_key, payload, hashlib.sha384).digest())
        if hmac.compare_digest(signature, expected):
            return base64.b64decode(payload)
    raise AssertionError(f"an entry not signed with {strategy}: {value[:80]!r}")


@pytest.mark.parametrize("strategy", [None, "MAC", "ENCRYPT"])
def test_token_cache_in_memcached(
    tmp_path: pathlib.Path,
    keystone: KeystoneStandin,
    memcached: MemcachedServer,
    strategy: str | None,
) -> None:
    memcached.flush()
    options = {
        "DEFAULT": {"auth_strategy": "keystone"},
        "keystone_authtoken": kolla_authtoken(keystone, memcached, strategy),
    }
    # no introspection here: Ironic is never called
    dead_ironic = f"http://127.0.0.1:{loopback.free_port()}"
    server = InspectorServer(tmp_path, dead_ironic, options=options)
    server.start()
    try:
        token = keystone.issue(USER, ["admin"])
        bad = "gAAAA-not-a-token-" + strategy_name(strategy)
        for _ in range(2):
            answer = requests.get(
                server.url + "/v1/rules", headers={"X-Auth-Token": token}, timeout=30
            )
            assert answer.status_code == 200, (answer.text, server.log_tail())
        assert keystone.validations.count(token) == 1, keystone.validations
        refused = requests.get(
            server.url + "/v1/rules", headers={"X-Auth-Token": bad}, timeout=30
        )
        assert refused.status_code == 401, refused.text
        anonymous = requests.get(server.url + "/v1/rules", timeout=30)
        assert anonymous.status_code == 401
    finally:
        assert server.stop() == 0, server.log_tail()

    keys = [key for key in memcached.keys() if key.startswith("tokens/")]
    values = [memcached.get(key) for key in keys]
    assert keys and all(v is not None for v in values), keys
    stored = [v for v in values if v is not None]
    if strategy is None:
        entries = [json.loads(v) for v in stored]
        assert any(USER in json.dumps(entry) for entry in entries), entries
        return
    for value in stored:
        assert USER.encode() not in value  # never readable as stored
        payload = _signed_payload(value, [token, bad], strategy)
        if strategy == "MAC":
            assert USER in payload.decode()  # signed, readable once decoded
        else:
            assert USER.encode() not in payload  # AES-CBC: IV then ciphertext
            assert len(payload) % 16 == 0 and len(payload) >= 32


def strategy_name(strategy: str | None) -> str:
    return (strategy or "none").lower()


def test_encrypt_under_apache(
    tmp_path: pathlib.Path,
    keystone: KeystoneStandin,
    memcached: MemcachedServer,
    postgres: PostgresServer,
) -> None:
    memcached.flush()
    options = {
        "DEFAULT": {"auth_strategy": "keystone"},
        "json_rpc": {"auth_strategy": "noauth"},  # no conductor here
        "keystone_authtoken": kolla_authtoken(keystone, memcached, "ENCRYPT"),
    }
    cluster = SplitCluster(
        tmp_path,
        f"http://127.0.0.1:{loopback.free_port()}",
        conductors=0,
        postgres=postgres,
        database="inspector_keystone",
        options=options,
        api_server="apache",
        rpc_transport="json-rpc",
    )
    with cluster:
        assert cluster.api is not None
        token = keystone.issue(USER, ["admin"])
        for _ in range(6):  # new connections: either daemon process answers
            answer = requests.get(
                cluster.api.url + "/v1/rules",
                headers={"X-Auth-Token": token, "Connection": "close"},
                timeout=30,
            )
            assert answer.status_code == 200, (answer.text, cluster.api.log_tail())
        refused = requests.get(
            cluster.api.url + "/v1/rules",
            headers={"X-Auth-Token": "gAAAA-not-a-token-apache"},
            timeout=30,
        )
        assert refused.status_code == 401, refused.text
    # validated once: every later answer came from memcached (which both
    # daemon processes share; keystonemiddleware keeps no cache of its own)
    assert keystone.validations.count(token) == 1, keystone.validations
    stored = [memcached.get(k) for k in memcached.keys() if k.startswith("tokens/")]
    assert stored
    for value in stored:
        assert value is not None and USER.encode() not in value
        payload = _signed_payload(value, [token, "gAAAA-not-a-token-apache"], "ENCRYPT")
        assert USER.encode() not in payload
