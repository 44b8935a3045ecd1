"""Which conductor runs the cluster-wide periodic work: a lease in the
database, so it works on every coordination backend and in standalone."""

import logging
import time
from collections.abc import Callable

from inspector import exceptions
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

    def __init__(
        self,
        db: Database,
        holder: str,
        lease: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._db = db
        self._clock = clock
        self.holder = holder
        self.lease = lease
        self._valid_until = 0.0
        self._leading = False
        self._failing_since: float | None = None
        self.epoch: int | None = None
        """The epoch of the last term this conductor held (None: never led)."""

    def renew(self) -> bool:
        """Take or keep the lead; False when another conductor has it or
        the database cannot be reached."""
        asked = self._clock()
        try:
            epoch = leases.hold(self._db, leases.LEADER, self.holder, self.lease)
        except Exception as exc:  # database unreachable: not the leader
            self._unreachable(exc)
            return False
        if self._failing_since is not None:
            LOG.info(
                "The leader lease can be read again after %.0f s",
                self._clock() - self._failing_since,
            )
            self._failing_since = None
        if epoch is not None:
            # counted from before the request: never believes in a lease
            # longer than the database granted
            self._valid_until = asked + self.lease
            if not self._leading or epoch != self.epoch:
                LOG.info("%s is now the leader (epoch %d)", self.holder, epoch)
            self._leading = True
            self.epoch = epoch
        else:
            if self._leading:
                LOG.warning(
                    "%s lost the leader lease (epoch %s) to another conductor",
                    self.holder,
                    self.epoch,
                )
            self._leading = False
            self._valid_until = 0.0
        return self._leading

    def _unreachable(self, exc: Exception) -> None:
        """One line when renewals start failing; quiet while they go on."""
        was_leading = self._leading
        self._leading = False
        self._valid_until = 0.0
        if self._failing_since is not None:
            LOG.debug("Cannot renew the leader lease of %s: %s", self.holder, exc)
            return
        self._failing_since = self._clock()
        cause = getattr(exc, "reason", None) or exceptions.first_line(exc)
        LOG.warning(
            "Cannot renew the leader lease of %s: %s; %s until the database "
            "answers (no conductor can lead meanwhile)",
            self.holder,
            cause,
            "it stops leading" if was_leading else "it does not lead",
        )

    def is_leader(self) -> bool:
        return self._leading and self._clock() < self._valid_until

    def resign(self) -> None:
        """Hand the lead over at once (clean stop)."""
        if not self._leading:
            return
        self._leading = False
        try:
            leases.give_up(self._db, leases.LEADER, self.holder)
        except Exception as exc:
            LOG.warning("Could not give up the leader lease: %s", exc)
