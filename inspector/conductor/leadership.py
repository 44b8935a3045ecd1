"""Which conductor runs the cluster-wide periodic work: a lease in the
database, so it works on every coordination backend and in standalone."""

import logging
import time

from inspector.db import leases
from inspector.db.engine import Database

LOG = logging.getLogger(__name__)


class Leadership:
    """One conductor at a time runs the cluster-wide periodic work.

    Built on a lease row in the database (:mod:`inspector.db.leases`), so it
    works the same on every coordination backend (tooz's etcd driver has no
    election) and in standalone mode. A lost lease is noticed on the next
    renewal, which fails, not assumed away: :meth:`is_leader` is true only
    while the last successful renewal is younger than the lease.
    """

    def __init__(self, db: Database, holder: str, lease: float) -> None:
        self._db = db
        self.holder = holder
        self.lease = lease
        self._valid_until = 0.0
        self._leading = False

    def renew(self) -> bool:
        """Take or keep the lead; False when another conductor has it."""
        asked = time.monotonic()
        try:
            epoch = leases.hold(self._db, leases.LEADER, self.holder, self.lease)
        except Exception as exc:  # database unreachable: not the leader
            epoch = None
            LOG.warning("Cannot renew the leader lease of %s: %s", self.holder, exc)
        if epoch is not None:
            # counted from before the request: never believes in a lease
            # longer than the database granted
            self._valid_until = asked + self.lease
            if not self._leading:
                LOG.info("%s is now the leader (epoch %d)", self.holder, epoch)
            self._leading = True
        else:
            if self._leading:
                LOG.warning(
                    "%s lost the leader lease; another conductor leads now",
                    self.holder,
                )
            self._leading = False
            self._valid_until = 0.0
        return self._leading

    def is_leader(self) -> bool:
        return self._leading and time.monotonic() < self._valid_until

    def resign(self) -> None:
        """Hand the lead over at once (clean stop)."""
        if not self._leading:
            return
        self._leading = False
        try:
            leases.give_up(self._db, leases.LEADER, self.holder)
        except Exception as exc:
            LOG.warning("Could not give up the leader lease: %s", exc)
