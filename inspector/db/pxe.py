"""What the PXE filter reads from the database: the MACs of the nodes that
may boot the inspection ramdisk now, and whether any introspection runs."""

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
