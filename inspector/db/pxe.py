"""What the PXE filter reads from the database: the MACs of the nodes that
may boot the inspection ramdisk now, and whether any introspection runs."""

import datetime
import json
from typing import Any

import sqlalchemy as sa

from inspector import states
from inspector.db import models
from inspector.db.engine import Database

BOOTING = (states.STARTING, states.WAITING, states.PROCESSING)
"""Introspections whose machine may (still) ask for the ramdisk."""


def booting(db: Database) -> tuple[frozenset[str], bool]:
    """(MACs of nodes under introspection, whether any introspection is
    running): two indexed queries, whatever the number of finished records."""
    intro, attr = models.Introspection, models.Attribute
    macs = (
        sa.select(attr.value)
        .join(intro, intro.uuid == attr.node_uuid)
        .where(attr.name == "mac", intro.state.in_(BOOTING))
    )
    running = sa.select(intro.uuid).where(intro.state.in_(BOOTING)).limit(1)
    with db.session() as session:
        found = frozenset(str(v).lower() for (v,) in session.execute(macs))
        active = session.execute(running).first() is not None
    return found, active


def report(db: Database, host: str, driver: str, status: dict[str, Any]) -> bool:
    """Store what the filter of ``host`` reports now; whether an operator
    asked it to sync (the request is consumed)."""
    now = models.utcnow()
    with db.session() as session:
        row = session.get(models.PxeFilter, host, with_for_update=True)
        if row is None:
            session.add(
                models.PxeFilter(
                    host=host,
                    driver=driver,
                    status=json.dumps(status),
                    heartbeat_at=now,
                    sync_requested_at=None,
                )
            )
            return False
        requested = row.sync_requested_at is not None
        row.driver, row.status, row.heartbeat_at = driver, json.dumps(status), now
        row.sync_requested_at = None
        return requested


def filters(db: Database) -> list[dict[str, Any]]:
    """Every filter that reported, by host: its status, heartbeat and
    whether a sync was asked of it."""
    with db.session() as session:
        rows = session.scalars(
            sa.select(models.PxeFilter).order_by(models.PxeFilter.host)
        ).all()
        return [
            {
                "host": row.host,
                "driver": row.driver,
                "status": json.loads(row.status),
                "heartbeat_at": row.heartbeat_at,
                "sync_requested_at": row.sync_requested_at,
            }
            for row in rows
        ]


def request_sync(db: Database, host: str | None = None) -> list[str]:
    """Ask one filter (or all) for a repair sync at its next report; the
    hosts asked."""
    now = models.utcnow()
    table = models.PxeFilter
    with db.session() as session:
        query = sa.select(table.host)
        if host is not None:
            query = query.where(table.host == host)
        hosts = list(session.scalars(query))
        if hosts:
            session.execute(
                sa.update(table)
                .where(table.host.in_(hosts))
                .values(sync_requested_at=now)
            )
        return sorted(hosts)


def forget(db: Database, host: str) -> bool:
    """Drop a retired filter's row; whether there was one."""
    with db.session() as session:
        row = session.get(models.PxeFilter, host)
        if row is None:
            return False
        session.delete(row)
        return True


def age(heartbeat_at: datetime.datetime) -> float:
    """Seconds since a heartbeat (stored naive UTC)."""
    return (models.utcnow() - heartbeat_at).total_seconds()
