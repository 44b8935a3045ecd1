"""The operator's word on each conductor, as rows (the standalone process).

Split mode keeps these documents in the coordination backend; the standalone
process has no backend, so its one conductor's document is a row here
(:class:`inspector.coordination.conductor_state.DatabaseStateStore`).
"""

import sqlalchemy as sa

from inspector.db import models
from inspector.db.engine import UNREACHABLE, Database, unreachable

_TABLE = models.ConductorState.__table__
_STATE_OF = sa.select(_TABLE.c.state).where(_TABLE.c.host == sa.bindparam("host"))


def get(db: Database, host: str) -> str | None:
    """The JSON document stored for ``host``, if any.

    Read on every cast of the standalone process (is its conductor
    disabled?): a Core query on a pooled connection, not an ORM session.
    """
    try:
        with db.engine.connect() as conn:
            state = conn.execute(_STATE_OF, {"host": host}).scalar()
    except UNREACHABLE as exc:
        raise unreachable(exc) from exc
    return str(state) if state is not None else None


def put(db: Database, host: str, state: str) -> None:
    """Store ``state`` (a JSON document) for ``host``."""
    with db.session() as session:
        row = session.get(models.ConductorState, host)
        if row is None:
            session.add(
                models.ConductorState(
                    host=host, state=state, updated_at=models.utcnow()
                )
            )
        else:
            row.state, row.updated_at = state, models.utcnow()


def hosts(db: Database) -> list[str]:
    """Every host with a stored document, by name."""
    with db.session() as session:
        return sorted(session.scalars(sa.select(models.ConductorState.host)))


def delete(db: Database, host: str) -> None:
    """Forget ``host``'s document."""
    with db.session() as session:
        session.execute(
            sa.delete(models.ConductorState).where(models.ConductorState.host == host)
        )
