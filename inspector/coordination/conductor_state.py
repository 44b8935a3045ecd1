"""Where the operator's word on each conductor is kept: keys beside the group.

A conductor's liveness is its membership of the tooz group; whether it may
get new work (enabled, or disabled with a reason) is a small JSON document
stored in the same backend, next to the group, so that both come from one
place and cannot disagree with a database. The standalone process has no
backend: its one conductor's state is a row of its own database.
"""

import json
import pathlib
import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from inspector import exceptions
from inspector.coordination import backend

if TYPE_CHECKING:
    from tooz.coordination import CoordinationDriver

    from inspector.db.engine import Database

KEY_PREFIX = "ironic_inspector.conductor_state."


class StateStore(Protocol):
    def get(self, host: str) -> dict[str, Any] | None: ...

    def put(self, host: str, state: dict[str, Any]) -> None: ...

    def hosts(self) -> list[str]: ...

    def delete(self, host: str) -> None:
        """Forget ``host``'s document (nothing if there is none)."""


def _key(host: str) -> str:
    return KEY_PREFIX + urllib.parse.quote(host, safe="")


def _host(key: str) -> str:
    return urllib.parse.unquote(key.removeprefix(KEY_PREFIX))


def _load(raw: Any) -> dict[str, Any] | None:
    if raw is None:
        return None
    if isinstance(raw, bytes):
        raw = raw.decode()
    value = json.loads(raw)
    return value if isinstance(value, dict) else None


class Etcd3gwStore:
    def __init__(self, client: Any) -> None:
        self._client = client

    def get(self, host: str) -> dict[str, Any] | None:
        values = self._client.get(_key(host))
        return _load(values[0]) if values else None

    def put(self, host: str, state: dict[str, Any]) -> None:
        self._client.put(_key(host), json.dumps(state))

    def delete(self, host: str) -> None:
        self._client.delete(_key(host))

    def hosts(self) -> list[str]:
        found = self._client.get_prefix(KEY_PREFIX)
        return sorted(
            _host(
                meta["key"].decode() if isinstance(meta["key"], bytes) else meta["key"]
            )
            for _value, meta in found
        )


class RedisStore:
    def __init__(self, client: Any) -> None:
        self._client = client

    def get(self, host: str) -> dict[str, Any] | None:
        return _load(self._client.get(_key(host)))

    def put(self, host: str, state: dict[str, Any]) -> None:
        self._client.set(_key(host), json.dumps(state))

    def delete(self, host: str) -> None:
        self._client.delete(_key(host))

    def hosts(self) -> list[str]:
        keys = self._client.keys(KEY_PREFIX + "*")
        return sorted(_host(k.decode() if isinstance(k, bytes) else k) for k in keys)


class MemcachedStore:
    """memcached cannot list keys: an index key names the hosts with a state
    (updated with compare-and-swap)."""

    INDEX = KEY_PREFIX + "index"

    def __init__(self, client: Any) -> None:
        self._client = client

    def get(self, host: str) -> dict[str, Any] | None:
        return _load(self._client.get(_key(host)))

    def put(self, host: str, state: dict[str, Any]) -> None:
        self._client.set(_key(host), json.dumps(state), expire=0)
        for _attempt in range(10):
            raw, token = self._client.gets(self.INDEX)
            hosts = json.loads(raw) if raw else []
            if host in hosts:
                return
            value = json.dumps(sorted([*hosts, host]))
            if raw is None:
                if self._client.add(self.INDEX, value, expire=0, noreply=False):
                    return
            elif self._client.cas(self.INDEX, value, token, expire=0, noreply=False):
                return

    def hosts(self) -> list[str]:
        raw = self._client.get(self.INDEX)
        return sorted(json.loads(raw)) if raw else []

    def delete(self, host: str) -> None:
        self._client.delete(_key(host), noreply=False)
        for _attempt in range(10):
            raw, token = self._client.gets(self.INDEX)
            hosts = json.loads(raw) if raw else []
            if host not in hosts:
                return
            value = json.dumps(sorted(h for h in hosts if h != host))
            if self._client.cas(self.INDEX, value, token, expire=0, noreply=False):
                return


class FileStore:
    """tooz's file driver: one file per conductor beside its group files."""

    def __init__(self, directory: str) -> None:
        self._dir = pathlib.Path(directory) / "ironic_inspector_conductor_states"

    def get(self, host: str) -> dict[str, Any] | None:
        try:
            return _load((self._dir / _key(host)).read_text())
        except FileNotFoundError:
            return None

    def put(self, host: str, state: dict[str, Any]) -> None:
        self._dir.mkdir(parents=True, exist_ok=True)
        target = self._dir / _key(host)
        scratch = target.with_suffix(".tmp")
        scratch.write_text(json.dumps(state))
        scratch.replace(target)

    def delete(self, host: str) -> None:
        (self._dir / _key(host)).unlink(missing_ok=True)

    def hosts(self) -> list[str]:
        if not self._dir.is_dir():
            return []
        return sorted(
            _host(p.name)
            for p in self._dir.iterdir()
            if p.name.startswith(KEY_PREFIX) and p.suffix != ".tmp"
        )


class DatabaseStateStore:
    """The standalone process: its database is the only shared store."""

    def __init__(self, db: "Database") -> None:
        self._db = db

    def get(self, host: str) -> dict[str, Any] | None:
        from inspector.db import conductor_states

        return _load(conductor_states.get(self._db, host))

    def put(self, host: str, state: dict[str, Any]) -> None:
        from inspector.db import conductor_states

        conductor_states.put(self._db, host, json.dumps(state))

    def delete(self, host: str) -> None:
        from inspector.db import conductor_states

        conductor_states.delete(self._db, host)

    def hosts(self) -> list[str]:
        from inspector.db import conductor_states

        return conductor_states.hosts(self._db)


STORES: dict[str, Callable[[Any], StateStore]] = {
    "etcd3gw": Etcd3gwStore,
    "redis": RedisStore,
    "memcached": MemcachedStore,
    "file": FileStore,
}
"""The store of each tooz driver that can keep conductor state."""


def for_coordinator(coordinator: "CoordinationDriver") -> StateStore:
    """The store of the backend ``coordinator`` talks to.

    :raises ConfigError: a backend this service cannot keep state in.
    """
    driver, access = backend.direct_access(coordinator)
    if driver not in STORES or access is None:
        raise exceptions.ConfigError(
            f"Invalid configuration: [coordination]backend_url: the {driver} "
            "backend cannot keep conductor state; use etcd (etcd3+http://), "
            "redis:// or memcached://"
        )
    return STORES[driver](access)
