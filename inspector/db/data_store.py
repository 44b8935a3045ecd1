"""Where introspection data is kept once processing ends
(``[processing]store_data``).

- ``none``: nowhere; ``GET .../data`` answers 404;
- ``database``: in the service's database;
- ``directory``: outside the database, in ``[processing]store_data_dir``,
  laid out for other tools and for rebuilding a lost database::

      <dir>/<node uuid>/introspection.json   uuid, state, started_at,
                                              finished_at, error
      <dir>/<node uuid>/unprocessed.json     the data as the ramdisk sent it
      <dir>/<node uuid>/processed.json       the data after the hooks

  Files are written whole (a temporary file renamed), readable JSON.

While a node is being processed its raw data is in the database whatever
the store. ``keep`` files the data before the introspection is marked
finished (so a client that sees ``finished`` can read it at once);
``settle`` runs after, recording the outcome and dropping the database's
copies when the store is elsewhere.
"""

import json
import os
import pathlib
import shutil
import tempfile
from typing import Any, Protocol

from oslo_config import cfg

from inspector import exceptions
from inspector.db import stored_data
from inspector.db.engine import Database
from inspector.db.introspections import IntrospectionRecord


class DataStore(Protocol):
    def get(self, uuid: str, *, processed: bool) -> dict[str, Any]: ...

    def check_reapply(self) -> None:
        """Raise InvalidInput when this store keeps nothing to reapply."""

    def for_reapply(self, uuid: str) -> dict[str, Any] | None:
        """The raw data to put back in the database for a reapply, or None
        when it is there already; DataNotFound when there is none."""

    def keep(self, uuid: str, processed: dict[str, Any] | None) -> None: ...

    def settle(self, record: IntrospectionRecord) -> None: ...

    def delete(self, uuid: str) -> None: ...


class NoStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    def get(self, uuid: str, *, processed: bool) -> dict[str, Any]:
        raise exceptions.NotFound(
            "Inspector is not configured to store introspection data; set "
            "[processing]store_data = database or directory to keep it"
        )

    def check_reapply(self) -> None:
        raise exceptions.InvalidInput(
            "Inspector is not configured to store introspection data, so there "
            "is nothing to reapply; set [processing]store_data = database or "
            "post the data in the request body"
        )

    def for_reapply(self, uuid: str) -> dict[str, Any] | None:
        self.check_reapply()
        return None

    def keep(self, uuid: str, processed: dict[str, Any] | None) -> None:
        """Nothing is kept."""

    def settle(self, record: IntrospectionRecord) -> None:
        stored_data.delete(self._db, record.uuid)

    def delete(self, uuid: str) -> None:
        stored_data.delete(self._db, uuid)


class DatabaseDataStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    def get(self, uuid: str, *, processed: bool) -> dict[str, Any]:
        return stored_data.get(self._db, uuid, processed=processed)

    def check_reapply(self) -> None:
        """Raw data is kept in the database."""

    def for_reapply(self, uuid: str) -> dict[str, Any] | None:
        stored_data.get(self._db, uuid, processed=False)  # DataNotFound: 404
        return None

    def keep(self, uuid: str, processed: dict[str, Any] | None) -> None:
        if processed is not None:
            stored_data.store(self._db, uuid, processed, processed=True)

    def settle(self, record: IntrospectionRecord) -> None:
        """The data is where it belongs already."""

    def delete(self, uuid: str) -> None:
        stored_data.delete(self._db, uuid)


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def _write(path: pathlib.Path, value: Any) -> None:
    handle, scratch = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(handle, "w") as out:
        json.dump(value, out, indent=1, sort_keys=True)
    os.replace(scratch, path)


class DirectoryStore:
    def __init__(self, db: Database, root: str) -> None:
        self._db = db
        self.root = pathlib.Path(root)

    def _dir(self, uuid: str) -> pathlib.Path:
        if "/" in uuid or uuid.startswith("."):
            raise exceptions.InvalidInput(f"Invalid node UUID {uuid!r}")
        return self.root / uuid

    def get(self, uuid: str, *, processed: bool) -> dict[str, Any]:
        name = "processed.json" if processed else "unprocessed.json"
        try:
            value: dict[str, Any] = json.loads((self._dir(uuid) / name).read_text())
        except FileNotFoundError:
            kind = "Processed" if processed else "Unprocessed"
            raise exceptions.DataNotFound(
                f"{kind} introspection data for node {uuid} was not found"
            ) from None
        return value

    def check_reapply(self) -> None:
        """Raw data is kept in the directory."""

    def for_reapply(self, uuid: str) -> dict[str, Any] | None:
        return self.get(uuid, processed=False)

    def keep(self, uuid: str, processed: dict[str, Any] | None) -> None:
        target = self._dir(uuid)
        target.mkdir(parents=True, exist_ok=True)
        try:
            raw = stored_data.get(self._db, uuid, processed=False)
            _write(target / "unprocessed.json", raw)
        except exceptions.DataNotFound:
            pass
        if processed is not None:
            _write(target / "processed.json", processed)

    def settle(self, record: IntrospectionRecord) -> None:
        target = self._dir(record.uuid)
        target.mkdir(parents=True, exist_ok=True)
        _write(
            target / "introspection.json",
            {
                "uuid": record.uuid,
                "state": record.state,
                "started_at": _iso(record.started_at),
                "finished_at": _iso(record.finished_at),
                "error": record.error,
            },
        )
        stored_data.delete(self._db, record.uuid)  # kept outside now

    def delete(self, uuid: str) -> None:
        shutil.rmtree(self._dir(uuid), ignore_errors=True)
        stored_data.delete(self._db, uuid)

    def records(self) -> list[dict[str, Any]]:
        """Every introspection.json in the store (for a rebuild)."""
        found: list[dict[str, Any]] = []
        if not self.root.is_dir():
            return found
        for path in sorted(self.root.glob("*/introspection.json")):
            try:
                found.append(json.loads(path.read_text()))
            except (OSError, ValueError):
                continue
        return found


def for_conf(conf: cfg.ConfigOpts, db: Database) -> DataStore:
    """The store ``[processing]store_data`` names now."""
    kind = conf.processing.store_data
    if kind == "database":
        return DatabaseDataStore(db)
    if kind == "directory":
        return DirectoryStore(db, conf.processing.store_data_dir)
    return NoStore(db)


class DataStores:
    """The store of a process, built once per setting: ``store_data`` is
    mutable (a SIGHUP may change it), so :meth:`current` builds the store
    again only when the setting changed."""

    def __init__(self, conf: cfg.ConfigOpts, db: Database) -> None:
        self._conf = conf
        self._db = db
        self._built: tuple[tuple[str, str], DataStore] | None = None

    def current(self) -> DataStore:
        opts = self._conf.processing
        setting = (opts.store_data, opts.store_data_dir)
        built = self._built  # one read: another thread may replace it
        if built is None or built[0] != setting:
            built = (setting, for_conf(self._conf, self._db))
            self._built = built
        return built[1]
