"""What the PXE filter reads from the database: the MACs of the nodes that
may boot the inspection ramdisk now, and whether any introspection runs."""

import datetime
import json
from typing import Any, cast

import sqlalchemy as sa

from inspector import states
from inspector.db import models
from inspector.db.engine import Database

BOOTING = (states.STARTING, states.WAITING, states.PROCESSING)
"""Introspections whose machine may (still) ask for the ramdisk."""

_INTROSPECTIONS = cast(sa.Table, models.Introspection.__table__)
_ATTRIBUTES = cast(sa.Table, models.Attribute.__table__)
_FILTERS = cast(sa.Table, models.PxeFilter.__table__)
_BOOTING_MACS = (
    sa.select(_ATTRIBUTES.c.value)
    .join(_INTROSPECTIONS, _INTROSPECTIONS.c.uuid == _ATTRIBUTES.c.node_uuid)
    .where(_ATTRIBUTES.c.name == "mac", _INTROSPECTIONS.c.state.in_(BOOTING))
)
_RUNNING = (
    sa.select(_INTROSPECTIONS.c.uuid)
    .where(_INTROSPECTIONS.c.state.in_(BOOTING))
    .limit(1)
)
_HOST = _FILTERS.c.host == sa.bindparam("w_host")
_REQUESTED = sa.select(_FILTERS.c.sync_requested_at).where(_HOST)
_REPORT = (
    sa.update(_FILTERS)
    .where(_HOST)
    .values(
        driver=sa.bindparam("v_driver"),
        status=sa.bindparam("v_status"),
        heartbeat_at=sa.bindparam("v_heartbeat_at"),
        sync_requested_at=None,
    )
)
_ADD = sa.insert(_FILTERS)
_FILTERS_BY_HOST = sa.select(_FILTERS).order_by(_FILTERS.c.host)
_DELETE = sa.delete(_FILTERS).where(_HOST)


def booting(db: Database) -> tuple[frozenset[str], bool]:
    """(MACs of nodes under introspection, whether any introspection is
    running): two indexed queries, whatever the number of finished records."""
    with db.connect() as conn:
        found = frozenset(str(v).lower() for v in conn.scalars(_BOOTING_MACS))
        active = conn.execute(_RUNNING).first() is not None
    return found, active


def report(db: Database, host: str, driver: str, status: dict[str, Any]) -> bool:
    """Store what the filter of ``host`` reports now; whether an operator
    asked it to sync (the request is consumed)."""
    now = models.utcnow()
    with db.begin() as conn:
        row = conn.execute(_REQUESTED.with_for_update(), {"w_host": host}).first()
        if row is None:
            conn.execute(
                _ADD,
                {
                    "host": host,
                    "driver": driver,
                    "status": json.dumps(status),
                    "heartbeat_at": now,
                    "sync_requested_at": None,
                },
            )
            return False
        conn.execute(
            _REPORT,
            {
                "w_host": host,
                "v_driver": driver,
                "v_status": json.dumps(status),
                "v_heartbeat_at": now,
            },
        )
        return row.sync_requested_at is not None


def filters(db: Database) -> list[dict[str, Any]]:
    """Every filter that reported, by host: its status, heartbeat and
    whether a sync was asked of it."""
    with db.connect() as conn:
        rows = conn.execute(_FILTERS_BY_HOST).all()
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
    query = sa.select(_FILTERS.c.host)
    if host is not None:
        query = query.where(_FILTERS.c.host == host)
    with db.begin() as conn:
        hosts = list(conn.scalars(query))
        if hosts:
            conn.execute(
                sa.update(_FILTERS)
                .where(_FILTERS.c.host.in_(hosts))
                .values(sync_requested_at=now)
            )
    return sorted(hosts)


def forget(db: Database, host: str) -> bool:
    """Drop a retired filter's row; whether there was one."""
    with db.begin() as conn:
        return bool(conn.execute(_DELETE, {"w_host": host}).rowcount)


def age(heartbeat_at: datetime.datetime) -> float:
    """Seconds since a heartbeat (stored naive UTC)."""
    return (models.utcnow() - heartbeat_at).total_seconds()
