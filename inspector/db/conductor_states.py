"""The operator's word on each conductor (enabled, or disabled with a
reason), as rows: one JSON document per host, in every shape.

The standalone process and the split shape's API, conductors and
``ironic-inspector-manage`` read the same rows
(:class:`inspector.coordination.conductor_state.DatabaseStateStore`).
"""

from typing import cast

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from inspector.db import models
from inspector.db.engine import Database

_TABLE = cast(sa.Table, models.ConductorState.__table__)
_WHERE = _TABLE.c.host == sa.bindparam("host")
_STATE_OF = sa.select(_TABLE.c.state).where(_WHERE)
_EVERY = sa.select(_TABLE.c.host, _TABLE.c.state).order_by(_TABLE.c.host)
_REPLACE = (
    sa.update(_TABLE)
    .where(_TABLE.c.host == sa.bindparam("w_host"))
    .values(state=sa.bindparam("v_state"), updated_at=sa.bindparam("v_updated_at"))
)
_ADD = sa.insert(_TABLE)
_DELETE = sa.delete(_TABLE).where(_WHERE)


def get(db: Database, host: str) -> str | None:
    """The JSON document stored for ``host``, if any.

    Read on every cast of the standalone process (is its conductor
    disabled?): a Core query on a pooled connection, not an ORM session.
    """
    with db.connect() as conn:
        state = conn.execute(_STATE_OF, {"host": host}).scalar()
    return str(state) if state is not None else None


def every(db: Database) -> dict[str, str]:
    """Every stored document by host, in one statement (the split API's
    router reads it at each refresh of its member cache)."""
    with db.connect() as conn:
        return {str(host): str(state) for host, state in conn.execute(_EVERY)}


def put(db: Database, host: str, state: str) -> None:
    """Store ``state`` (a JSON document) for ``host``."""
    now = models.utcnow()
    with db.begin() as conn:
        replace = {"w_host": host, "v_state": state, "v_updated_at": now}
        if not conn.execute(_REPLACE, replace).rowcount:
            conn.execute(_ADD, {"host": host, "state": state, "updated_at": now})


def add(db: Database, host: str, state: str) -> bool:
    """Store ``state`` for ``host`` unless a document is stored already;
    False when one is (or another process stored one first)."""
    row = {"host": host, "state": state, "updated_at": models.utcnow()}
    try:
        with db.begin() as conn:
            if conn.execute(_STATE_OF, {"host": host}).first() is not None:
                return False
            conn.execute(_ADD, row)
        return True
    except sa_exc.IntegrityError:
        return False


def delete(db: Database, host: str) -> None:
    """Forget ``host``'s document."""
    with db.begin() as conn:
        conn.execute(_DELETE, {"host": host})
