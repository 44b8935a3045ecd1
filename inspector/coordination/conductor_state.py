"""Where the operator's word on each conductor is kept: the database.

A conductor's liveness is its membership of the tooz group (standalone: its
leader lease); whether it may get new work (enabled, or disabled with a
reason) is a small JSON document per host in the database every process of
a deployment shares, so the API's router, the conductors and
``ironic-inspector-manage`` read the same rows in every shape.
"""

import json
from typing import TYPE_CHECKING, Any

from inspector.db import conductor_states

if TYPE_CHECKING:
    from tooz.coordination import CoordinationDriver

    from inspector.db.engine import Database


def _load(raw: str | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    value = json.loads(raw)
    return value if isinstance(value, dict) else None


class DatabaseStateStore:
    """The documents, one per host (no document: enabled)."""

    def __init__(self, db: "Database") -> None:
        self._db = db

    def get(self, host: str) -> dict[str, Any] | None:
        return _load(conductor_states.get(self._db, host))

    def every(self) -> dict[str, dict[str, Any]]:
        """Every host's document, read in one statement."""
        found = {}
        for host, raw in conductor_states.every(self._db).items():
            state = _load(raw)
            if state is not None:
                found[host] = state
        return found

    def put(self, host: str, state: dict[str, Any]) -> None:
        conductor_states.put(self._db, host, json.dumps(state))

    def add(self, host: str, state: dict[str, Any]) -> bool:
        """Store ``state`` unless ``host`` has a document; False if it has."""
        return conductor_states.add(self._db, host, json.dumps(state))

    def delete(self, host: str) -> None:
        """Forget ``host``'s document (nothing if there is none)."""
        conductor_states.delete(self._db, host)


def for_split(coordinator: "CoordinationDriver", db: "Database") -> DatabaseStateStore:
    """The split shape's store, once the documents an earlier release kept
    in the coordination backend are carried into it
    (:mod:`inspector.coordination.legacy_states`).

    :raises ServiceUnavailable: the backend failed while they were read.
    """
    from inspector.coordination import legacy_states

    store = DatabaseStateStore(db)
    legacy_states.carry_over(coordinator, store)
    return store
