"""Who does the current step of an introspection: a conductor's claim (a
fenced write), the API's note of where it cast the step, and the count of
claims per conductor."""

from typing import cast

import sqlalchemy as sa

from inspector import states
from inspector.db import models
from inspector.db.engine import Database
from inspector.db.introspections import IntrospectionRecord, compare_and_swap, record_of
from inspector.db.models import utcnow

_TABLE = cast(sa.Table, models.Introspection.__table__)
_UNCLAIMED = sa.and_(
    _TABLE.c.uuid == sa.bindparam("w_uuid"),
    _TABLE.c.version == sa.bindparam("w_version"),
    _TABLE.c.owner.is_(None),
)
_HANDED = sa.update(_TABLE).where(_UNCLAIMED).values(handed_to=sa.bindparam("host"))
_RELEASE = (
    sa.update(_TABLE)
    .where(_UNCLAIMED, _TABLE.c.state.in_(sorted(states.WORKING)))
    .values(deadline=sa.bindparam("now"))
)
_OWNERS = (
    sa.select(_TABLE.c.owner, sa.func.count())
    .where(_TABLE.c.state.in_(sorted(states.WORKING)), _TABLE.c.owner.is_not(None))
    .group_by(_TABLE.c.owner)
)


def claim(
    db: Database,
    uuid: str,
    version: int,
    owner: str,
    run: str,
    state: str | None = None,
) -> IntrospectionRecord:
    """Make ``owner`` (this run of it) the owner of the current step.

    A fenced write like every other: it bumps the version, so a conductor
    that owned the step before can no longer write. With ``state``, only a
    row in that state is claimed (:class:`StaleState` otherwise).
    """
    values: dict[str, object] = {
        "owner": owner,
        "owner_run": run,
        "deadline": None,
        "claimed_at": utcnow(),
    }
    with db.begin() as conn:
        written = compare_and_swap(conn, uuid, version, values, state)
    return record_of(written)


def handed(db: Database, uuid: str, version: int, host: str) -> bool:
    """Record that the unclaimed step of ``uuid`` was cast to ``host``
    (after the broker took the cast). Not a fenced change: the version
    stays, so the cast's claim still matches; False when the step was
    claimed or moved on meanwhile (nothing to record then)."""
    with db.begin() as conn:
        result = conn.execute(
            _HANDED, {"w_uuid": uuid, "w_version": version, "host": host}
        )
    return bool(result.rowcount == 1)


def release_claim(db: Database, uuid: str, version: int) -> bool:
    """Let the sweep take the unclaimed step of ``uuid`` at once: its claim
    deadline becomes now. Not a fenced change (the version stays, so a
    conductor that got the cast after all still claims it); False when the
    step moved on or was claimed meanwhile."""
    with db.begin() as conn:
        result = conn.execute(
            _RELEASE, {"w_uuid": uuid, "w_version": version, "now": utcnow()}
        )
    return bool(result.rowcount == 1)


def owners(db: Database) -> dict[str, int]:
    """How many working introspections each conductor owns now."""
    with db.connect() as conn:
        return {str(owner): count for owner, count in conn.execute(_OWNERS)}
