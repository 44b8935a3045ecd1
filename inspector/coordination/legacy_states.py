"""Conductor states an earlier release kept in the coordination backend,
carried into the database once.

Releases up to 0.1.0 kept each split-mode conductor's document (``enabled``,
``reason``) beside the tooz group: an etcd or Redis key, a memcached key
named in an index key, or a file of tooz's file driver. This release reads
the database only, so each process of the split shape, as it starts, copies
every disabled conductor's document it finds there that is not marked
carried into the database (unless that host has a document there already,
which is newer), then marks it carried in the backend. A mark, not a
deletion: processes of the earlier release still running during a rolling
upgrade keep reading the documents as they were (doc/upgrade.md), and a
document does not come back after an operator enabled or forgot that
conductor through this release. To be removed once no supported upgrade
starts before this release.
"""

import json
import logging
import pathlib
import urllib.parse
from typing import TYPE_CHECKING, Any

from inspector.coordination import backend

if TYPE_CHECKING:
    from tooz.coordination import CoordinationDriver

    from inspector.coordination.conductor_state import DatabaseStateStore

LOG = logging.getLogger(__name__)

KEY_PREFIX = "ironic_inspector.conductor_state."
"""The key of a host's document: this, then the host URL-quoted."""
MEMCACHED_INDEX = KEY_PREFIX + "index"
"""memcached cannot list keys: this key held the JSON list of hosts."""
FILE_DIR = "ironic_inspector_conductor_states"
"""tooz's file driver: the directory of the documents, one file each."""
CARRIED = "carried_to_database"
"""Set in a document once it is in the database."""


def _key(host: str) -> str:
    return KEY_PREFIX + urllib.parse.quote(host, safe="")


def _host(key: str | bytes) -> str:
    text = key.decode() if isinstance(key, bytes) else key
    return urllib.parse.unquote(text.removeprefix(KEY_PREFIX))


def _load(raw: Any) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw.decode() if isinstance(raw, bytes) else raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _etcd3gw(client: Any) -> dict[str, dict[str, Any] | None]:
    return {
        _host(meta["key"]): _load(value)
        for value, meta in client.get_prefix(KEY_PREFIX)
    }


def _redis(client: Any) -> dict[str, dict[str, Any] | None]:
    return {_host(k): _load(client.get(k)) for k in client.keys(KEY_PREFIX + "*")}


def _memcached(client: Any) -> dict[str, dict[str, Any] | None]:
    raw = client.get(MEMCACHED_INDEX)
    hosts = json.loads(raw) if raw else []
    return {h: _load(client.get(_key(h))) for h in hosts if isinstance(h, str)}


def _file(directory: str) -> dict[str, dict[str, Any] | None]:
    folder = pathlib.Path(directory) / FILE_DIR
    if not folder.is_dir():
        return {}
    return {
        _host(p.name): _load(p.read_text())
        for p in folder.iterdir()
        if p.name.startswith(KEY_PREFIX) and p.suffix != ".tmp"
    }


def _mark(driver: str, access: Any, host: str, state: dict[str, Any]) -> None:
    value = json.dumps({**state, CARRIED: True})
    if driver == "etcd3gw":
        access.put(_key(host), value)
    elif driver == "redis":
        access.set(_key(host), value)
    elif driver == "memcached":
        access.set(_key(host), value, expire=0)
    else:
        target = pathlib.Path(access) / FILE_DIR / _key(host)
        scratch = target.with_name(target.name + ".tmp")
        scratch.write_text(value)
        scratch.replace(target)


READERS = {"etcd3gw": _etcd3gw, "redis": _redis, "memcached": _memcached, "file": _file}
"""Each backend an earlier release kept documents in: its reader."""


def carry_over(
    coordinator: "CoordinationDriver", store: "DatabaseStateStore"
) -> list[str]:
    """Copy the documents not carried yet from ``coordinator``'s backend
    into ``store``; the hosts whose document was copied.

    :raises ServiceUnavailable: the backend failed.
    """
    driver, access = backend.direct_access(coordinator)
    read = READERS.get(driver)
    if read is None or access is None:
        return []  # a backend the earlier releases kept nothing in
    carried = []
    with backend.translated("read the conductor states of an earlier release"):
        found = read(access)
        for host, state in sorted(found.items()):
            # enabled is what no document says: only a disabled one counts
            if state is None or state.get(CARRIED) or state.get("enabled", True):
                continue
            if store.add(host, state):
                carried.append(host)
                LOG.warning(
                    "Conductor %s is disabled (%s): its state carried from the "
                    "coordination backend into the database, where this "
                    "release keeps it",
                    host,
                    state.get("reason") or "no reason given",
                )
            _mark(driver, access, host, state)
    return carried
