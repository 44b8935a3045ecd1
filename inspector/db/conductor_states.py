"""The operator's word on each conductor, as rows (the standalone process).

Split mode keeps these documents in the coordination backend; the standalone
process has no backend, so its one conductor's document is a row here
(:class:`inspector.coordination.conductor_state.DatabaseStateStore`).
"""

from typing import cast

import sqlalchemy as sa

from inspector.db import models
from inspector.db.engine import Database

_TABLE = cast(sa.Table, models.ConductorState.__table__)
_WHERE = _TABLE.c.host == sa.bindparam("host")
_STATE_OF = sa.select(_TABLE.c.state).where(_WHERE)
_REPLACE = (
    sa.update(_TABLE)
    .where(_TABLE.c.host == sa.bindparam("w_host"))
    .values(state=sa.bindparam("v_state"), updated_at=sa.bindparam("v_updated_at"))
)
_ADD = sa.insert(_TABLE)
_HOSTS = sa.select(_TABLE.c.host).order_by(_TABLE.c.host)
_DELETE = sa.delete(_TABLE).where(_WHERE)


def get(db: Database, host: str) -> str | None:
    """The JSON document stored for ``host``, if any.

    Read on every cast of the standalone process (is its conductor
    disabled?): a Core query on a pooled connection, not an ORM session.
    """
    with db.connect() as conn:
        state = conn.execute(_STATE_OF, {"host": host}).scalar()
    return str(state) if state is not None else None


def put(db: Database, host: str, state: str) -> None:
    """Store ``state`` (a JSON document) for ``host``."""
    now = models.utcnow()
    with db.begin() as conn:
        replace = {"w_host": host, "v_state": state, "v_updated_at": now}
        if not conn.execute(_REPLACE, replace).rowcount:
            conn.execute(_ADD, {"host": host, "state": state, "updated_at": now})


def hosts(db: Database) -> list[str]:
    """Every host with a stored document, by name."""
    with db.connect() as conn:
        return list(conn.scalars(_HOSTS))


def delete(db: Database, host: str) -> None:
    """Forget ``host``'s document."""
    with db.begin() as conn:
        conn.execute(_DELETE, {"host": host})
