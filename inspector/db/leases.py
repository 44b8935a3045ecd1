"""Expiring holds in the database, shared by every process of a deployment.

The database is the one thing the standalone process and every split-mode
process share whatever the coordination backend is, and it is where the
state these holds protect lives. Every change is a compare-and-swap, so a
process that was paused past its lease finds out on its next write instead
of acting on a hold it lost. Times are UTC from each host's clock: keep
conductors' clocks in sync (NTP); a lease of several seconds tolerates the
usual sub-second skew.
"""

import datetime
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from inspector.db import models
from inspector.db.engine import Database
from inspector.db.models import utcnow

LEADER = "leader"
POWER_ON = "power_on"


_TABLE = cast(sa.Table, models.Lease.__table__)
_GET = sa.select(_TABLE).where(_TABLE.c.name == sa.bindparam("name"))
_ADD = sa.insert(_TABLE)


def _read(conn: sa.Connection, name: str) -> Any:
    return conn.execute(_GET, {"name": name}).first()


def _row(db: Database, name: str) -> Any:
    with db.connect() as conn:
        return _read(conn, name)


def _create(
    db: Database, name: str, holder: str | None, expires_at: datetime.datetime
) -> bool:
    """Insert the lease row; False when another process inserted it first."""
    row = {"name": name, "holder": holder, "epoch": 1, "expires_at": expires_at}
    try:
        with db.begin() as conn:
            conn.execute(_ADD, row)
        return True
    except sa_exc.IntegrityError:
        return False


def hold(db: Database, name: str, holder: str, ttl: float) -> int | None:
    """Take or renew ``name`` for ``ttl`` seconds.

    Returns the lease's epoch when ``holder`` holds it now, None when
    someone else's lease is still running. The epoch grows by one with
    every new term: another holder, or the same holder coming back after
    its lease ran out. It never goes down, and two holders never get the
    same epoch: every write is a compare-and-swap on the whole row as read
    (holder, epoch and expiry), so a renewal and a takeover of the same
    expired lease cannot both succeed.
    """
    now = utcnow()
    expires = now + datetime.timedelta(seconds=ttl)
    table = _TABLE.c
    with db.begin() as conn:
        row = _read(conn, name)
        if row is None:
            pass
        elif row.holder != holder and row.holder is not None and row.expires_at >= now:
            return None
        else:
            renewal = row.holder == holder and row.expires_at >= now
            epoch = row.epoch if renewal else row.epoch + 1
            result = conn.execute(
                sa.update(_TABLE)
                .where(
                    table.name == name,
                    table.epoch == row.epoch,
                    table.holder.is_(None)
                    if row.holder is None
                    else table.holder == row.holder,
                    table.expires_at == row.expires_at,
                )
                .values(holder=holder, expires_at=expires, epoch=epoch)
            )
            return epoch if result.rowcount == 1 else None
    return 1 if _create(db, name, holder, expires) else None


def give_up(db: Database, name: str, holder: str) -> None:
    """End ``holder``'s lease at once (a clean stop), if it still has it."""
    table = _TABLE.c
    with db.begin() as conn:
        conn.execute(
            sa.update(_TABLE)
            .where(table.name == name, table.holder == holder)
            .values(holder=None, expires_at=utcnow() - datetime.timedelta(seconds=1))
        )


def held(db: Database, name: str) -> tuple[str, datetime.datetime] | None:
    """Who holds ``name`` and when the lease ends, while it runs."""
    row = _row(db, name)
    if row is None or row.holder is None or row.expires_at <= utcnow():
        return None
    return row.holder, row.expires_at


def reserve_slot(
    db: Database, name: str, spacing: float, burst: int = 1, attempts: int = 50
) -> datetime.datetime:
    """The next free time slot of ``name``: windows ``spacing`` seconds
    apart, each handing out ``burst`` slots, over every process.

    The row keeps the end of the last window handed out and how many of its
    slots are used; concurrent callers race with compare-and-swap and
    retry. With a burst of 1 a slot is simply ``spacing`` after the
    previous one.
    """
    table = _TABLE.c
    step = datetime.timedelta(seconds=spacing)
    for _ in range(attempts):
        now = utcnow()
        row = _row(db, name)
        if row is None:
            if _create(db, name, None, now + step):
                return now
            continue
        if row.expires_at <= now:  # the last window is over: a new one now
            slot, ends, used = now, now + step, 1
        elif row.used < burst:  # room left in the last window
            slot, ends, used = (
                max(now, row.expires_at - step),
                row.expires_at,
                row.used + 1,
            )
        else:  # the last window is full: the next one
            slot, ends, used = row.expires_at, row.expires_at + step, 1
        with db.begin() as conn:
            result = conn.execute(
                sa.update(_TABLE)
                .where(table.name == name, table.epoch == row.epoch)
                .values(expires_at=ends, used=used, epoch=row.epoch + 1)
            )
        if result.rowcount == 1:
            return slot
    raise RuntimeError(f"Could not reserve a {name} slot in {attempts} attempts")
