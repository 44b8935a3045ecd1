"""The conductor states an earlier release kept in the coordination backend
reach the database once: a disabled conductor stays disabled across the
upgrade, the database's newer word wins, and a state enabled or forgotten
after the upgrade does not come back (real etcd, Redis and memcached:
tests/integration/test_legacy_states.py)."""

import json
import pathlib
import urllib.parse
from typing import Any

import pytest
from tooz import coordination

from inspector import exceptions
from inspector.coordination import legacy_states
from inspector.coordination.conductor_state import DatabaseStateStore
from inspector.db import engine, migration

PREFIX = "ironic_inspector.conductor_state."


def _key(host: str) -> str:
    return PREFIX + urllib.parse.quote(host, safe="")


class Etcd:
    """What tooz's etcd3gw driver holds: etcd3gw's client, on a dict."""

    def __init__(self) -> None:
        self.data: dict[bytes, bytes] = {}

    def put(self, key: str, value: str) -> None:
        self.data[key.encode()] = value.encode()

    def get_prefix(self, prefix: str) -> list[tuple[bytes, dict[str, Any]]]:
        return [
            (v, {"key": k})
            for k, v in self.data.items()
            if k.startswith(prefix.encode())
        ]

    def write(self, host: str, state: dict[str, Any]) -> None:
        """As the earlier release's Etcd3gwStore.put."""
        self.put(_key(host), json.dumps(state))

    def read(self, host: str) -> Any:
        return json.loads(self.data[_key(host).encode()])


class Redis:
    def __init__(self) -> None:
        self.data: dict[bytes, bytes] = {}

    def set(self, key: str, value: str) -> None:
        self.data[key.encode()] = value.encode()

    def get(self, key: bytes | str) -> bytes | None:
        return self.data.get(key if isinstance(key, bytes) else key.encode())

    def keys(self, pattern: str) -> list[bytes]:
        return [k for k in self.data if k.startswith(pattern.rstrip("*").encode())]

    def write(self, host: str, state: dict[str, Any]) -> None:
        self.set(_key(host), json.dumps(state))

    def read(self, host: str) -> Any:
        return json.loads(self.data[_key(host).encode()])


class Memcached:
    """pymemcache's client; memcached cannot list keys: an index names the
    hosts (as the earlier release's MemcachedStore kept it)."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}

    def set(self, key: str, value: str, expire: int = 0) -> None:
        self.data[key] = value.encode()

    def get(self, key: str) -> bytes | None:
        return self.data.get(key)

    def write(self, host: str, state: dict[str, Any]) -> None:
        self.set(_key(host), json.dumps(state))
        hosts = json.loads(self.data.get(PREFIX + "index", b"[]"))
        self.set(PREFIX + "index", json.dumps(sorted({*hosts, host})))

    def read(self, host: str) -> Any:
        return json.loads(self.data[_key(host)])


class Files:
    """tooz's file driver itself: one file per host beside its groups."""

    def __init__(self, directory: pathlib.Path) -> None:
        self.dir = directory / "ironic_inspector_conductor_states"

    def write(self, host: str, state: dict[str, Any]) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / _key(host)).write_text(json.dumps(state))

    def read(self, host: str) -> Any:
        return json.loads((self.dir / _key(host)).read_text())


def _driver(module: str, **fields: Any) -> Any:
    return type("Driver", (), {"__module__": module, **fields})()


@pytest.fixture(params=["etcd3gw", "redis", "memcached", "file"])
def backend(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> tuple[Any, Any]:
    """(a coordinator, the earlier release's documents in its backend)."""
    if request.param == "file":
        coordinator = coordination.get_coordinator(f"file://{tmp_path}", b"c")
        return coordinator, Files(tmp_path)
    held: Any = {"etcd3gw": Etcd, "redis": Redis, "memcached": Memcached}[
        request.param
    ]()
    field = "_client" if request.param == "redis" else "client"
    return _driver(f"tooz.drivers.{request.param}", **{field: held}), held


@pytest.fixture
def store() -> DatabaseStateStore:
    db = engine.Database("sqlite://")
    migration.ensure_schema(db)
    return DatabaseStateStore(db)


DISABLED = {"enabled": False, "reason": "disk swap", "changed_at": "2026-11-30T10:00"}


def test_a_disabled_conductor_stays_disabled(
    backend: tuple[Any, Any], store: DatabaseStateStore
) -> None:
    coordinator, held = backend
    held.write("c-1", DISABLED)
    held.write("c/2", {"enabled": False})  # a host name quoted in the key
    held.write("c-3", {"enabled": True, "reason": None})  # as if never disabled
    assert legacy_states.carry_over(coordinator, store) == ["c-1", "c/2"]
    assert store.every() == {"c-1": DISABLED, "c/2": {"enabled": False}}
    # marked, and still as it was for the earlier release's processes
    assert held.read("c-1") == {**DISABLED, "carried_to_database": True}
    assert held.read("c-3") == {"enabled": True, "reason": None}
    # enabled and forgotten through this release: they do not come back
    store.delete("c-1")
    store.delete("c/2")
    assert legacy_states.carry_over(coordinator, store) == []
    assert store.every() == {}


def test_the_database_word_wins(
    backend: tuple[Any, Any], store: DatabaseStateStore
) -> None:
    coordinator, held = backend
    store.put("c-1", {"enabled": False, "reason": "newer"})
    held.write("c-1", DISABLED)
    assert legacy_states.carry_over(coordinator, store) == []
    assert store.get("c-1") == {"enabled": False, "reason": "newer"}
    assert held.read("c-1")["carried_to_database"] is True


def test_a_document_disabled_by_an_earlier_process_later_is_carried(
    backend: tuple[Any, Any], store: DatabaseStateStore
) -> None:
    """During a rolling upgrade, an earlier API or CLI still writes the
    backend: the next process of this release to start carries it."""
    coordinator, held = backend
    assert legacy_states.carry_over(coordinator, store) == []
    held.write("c-2", DISABLED)
    assert legacy_states.carry_over(coordinator, store) == ["c-2"]


def test_a_backend_without_documents_or_reader(store: DatabaseStateStore) -> None:
    zookeeper = _driver("tooz.drivers.zookeeper", _client=object())
    assert legacy_states.carry_over(zookeeper, store) == []
    assert legacy_states.carry_over(_driver("tooz.drivers.etcd3gw"), store) == []


def test_a_backend_failure_is_503(store: DatabaseStateStore) -> None:
    class Down(Etcd):
        def get_prefix(self, prefix: str) -> Any:
            raise coordination.ToozConnectionError("connection refused")

    with pytest.raises(exceptions.ServiceUnavailable, match="earlier release"):
        legacy_states.carry_over(_driver("tooz.drivers.etcd3gw", client=Down()), store)
