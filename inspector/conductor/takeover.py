"""Finding work lost with a conductor, and who looks for it.

Every step a conductor must take (``states.WORKING``) is either unclaimed
with a deadline, or owned by one run of one conductor. It is lost when:

- nobody claimed it by its deadline (the cast went to a conductor that died
  before taking it, or was lost in transit), or the API could not hand it
  over at all (an outage of the broker or the coordination backend: the
  API then sets the deadline to now, see :mod:`inspector.intake.handover`);
- nobody claimed it yet, and the conductor its cast went to (``handed_to``)
  is no longer a member of the group: the cast sits in that conductor's
  broker queue and nobody will take it before the deadline. The API's view
  of the group lags a kill by the backend's membership timeout, so casts
  made right after a kill go to the dead conductor;
- its owner is no longer a member of the conductor group (stopped, killed,
  or its membership lease expired);
- its owner is this very host, but an earlier run of it (a restart).

The leader (one conductor at a time, :mod:`inspector.conductor.leadership`)
looks for the first two; every conductor looks for the third on its own
host, and for steps it claimed whose worker ended early.
"""

import concurrent.futures
import dataclasses
import datetime
import logging
from collections.abc import Callable, Collection, Iterable, Iterator

from inspector import exceptions, metrics
from inspector.conductor.filing import fail
from inspector.conductor.work_queue import Step, WorkQueue
from inspector.db import introspections, sweeps
from inspector.db.introspections import IntrospectionRecord
from inspector.locking.base import holder_host, holder_run
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class Orphan:
    record: IntrospectionRecord
    reason: str
    cause: str = "owner_left"
    """The ``cause`` label of ``steps_taken_over`` (:mod:`inspector.metrics`)."""


def orphans(
    records: Iterable[IntrospectionRecord],
    alive: Collection[str] | None,
    host: str,
    run: str,
    now: datetime.datetime,
    leader: bool,
) -> Iterator[Orphan]:
    """The lost steps among ``records`` that ``host`` (run ``run``) must pick up.

    ``alive`` None means the group cannot be read now: steps other
    conductors own are left alone (an unreachable backend is no proof that
    they died), unclaimed ones past their deadline are still taken.
    """
    for record in records:
        step = record.state
        if record.owner == host:
            if record.owner_run != run:
                yield Orphan(
                    record, f"conductor {host} restarted while {step}", "restarted"
                )
        elif not leader:
            continue
        elif record.owner is None:
            if record.deadline is None or record.deadline < now:
                yield Orphan(
                    record,
                    f"no conductor picked up the {step} step in time (it "
                    "could not be handed over, or the conductor it was sent "
                    "to died)",
                    "unclaimed",
                )
            elif (
                record.handed_to not in (None, host)
                and alive is not None
                and record.handed_to not in alive
            ):
                yield Orphan(
                    record,
                    f"conductor {record.handed_to} left the group before "
                    f"taking the {step} step cast to it",
                    "addressee_left",
                )
        elif alive is not None and record.owner not in alive:
            yield Orphan(
                record, f"conductor {record.owner} left the group while {step}"
            )


def _judged_by_group(record: IntrospectionRecord, host: str) -> bool:
    """Whether the leader needs the group to judge ``record``: another
    conductor owns it, or its cast went to another conductor."""
    if record.owner is None:
        return record.handed_to not in (None, host)
    return record.owner != host


class Takeover:
    """Finds lost steps and resumes them from what is stored: every step
    can be repeated safely. Resumed steps are queued like delivered ones,
    so every lost step of a dead conductor is taken over at once."""

    def __init__(self, rt: Runtime, queue: WorkQueue, steps: dict[str, Step]) -> None:
        self.rt = rt
        self._queue = queue
        self._steps = steps
        self._resuming: set[str] = set()
        self._earlier_runs_checked = False
        """Whether this run has read the node locks once since it started
        (for those of an earlier run of its host)."""
        self._suspects: set[tuple[str, str]] = set()
        """Locks (key, value) the last sweep found held by a conductor that
        had left the group: broken if the next sweep finds them still so."""
        self._resumer = concurrent.futures.ThreadPoolExecutor(
            max_workers=4, thread_name_prefix="resume"
        )

    def sweep(self, alive: Callable[[], Collection[str]], leader: bool) -> int:
        """Find lost steps and resume them in the background; returns how
        many were found. ``alive`` lists the live conductors (read only
        when the leader must judge another conductor's steps)."""
        host, run_id = self.rt.conf.host, self.rt.run_id
        # work in hand before the read and after it: a step that ended
        # between the two was read still claimed here, one delivered
        # between them is claimed after; neither ended early
        active = self._queue.active()
        records = sweeps.working(self.rt.db)
        # an earlier run of this host (a restart) may hold node locks: they
        # are read, whoever leads, once after the start (the leader may
        # have resumed that run's steps elsewhere while this one started)
        # and whenever a step of that run turns up, and broken before the
        # resume
        earlier = any(
            r.owner == host and r.owner_run not in (None, run_id) for r in records
        )
        read = leader or earlier or not self._earlier_runs_checked
        held = self._held_locks() if read else {}
        if held is not None and read:
            self._earlier_runs_checked = True
        locks = held or {}
        self._break_earlier_runs_locks(locks, host, run_id)
        hosts: Collection[str] | None = ()
        if leader and (
            any(_judged_by_group(r, host) for r in records)
            or any(holder_host(v) not in (None, host) for v in locks.values())
        ):
            try:
                hosts = alive()
            except exceptions.ServiceUnavailable as exc:
                # never mistake an unreachable backend for dead conductors;
                # unclaimed steps need no group to be judged lost
                LOG.warning("Not judging other conductors' work this time: %s", exc)
                hosts = None
        if leader:
            self._break_dead_locks(locks, hosts)
        now = introspections.utcnow()
        found = [
            o
            for o in orphans(records, hosts, host, run_id, now, leader)
            if o.record.uuid not in self._resuming
        ]
        active |= self._queue.active()
        for record in records:
            if (
                record.owner == host
                and record.owner_run == run_id
                and record.uuid not in active
                and record.uuid not in self._resuming
            ):
                # claimed here, but no worker has it: its work ended early
                found.append(
                    Orphan(
                        record,
                        f"its {record.state} step on {host} ended unfinished",
                        "ended_early",
                    )
                )
        for orphan in found:
            self._resuming.add(orphan.record.uuid)
            self._resumer.submit(self._resume_once, orphan)
        return len(found)

    def _held_locks(self) -> dict[str, str] | None:
        """The node locks and their values; None when they cannot be read
        (the backend is away, or cannot list its locks)."""
        try:
            return self.rt.locks.holders()
        except Exception as exc:  # nothing to judge this time
            LOG.debug("Cannot list the node locks: %s", exc)
            return None

    def _break_earlier_runs_locks(
        self, locks: dict[str, str], host: str, run_id: str
    ) -> None:
        """Break the node locks an earlier run of this very host holds: a
        conductor killed and started again under its name (its group
        membership was taken over when this run joined) would otherwise
        wait out the locks' lease (``lock_timeout``, 30 s by default)
        before it can resume its own steps. No second look is needed: host
        names are unique to a conductor, and this run is its only one."""
        for key, value in sorted(locks.items()):
            if holder_host(value) != host or holder_run(value) in (None, run_id):
                continue
            if self._break_lock(key, value):
                LOG.warning(
                    "Broke a node lock of an earlier run of this conductor "
                    "(%s, run %s): %s",
                    host,
                    holder_run(value),
                    key,
                )

    def _break_dead_locks(
        self, locks: dict[str, str], alive: Collection[str] | None
    ) -> None:
        """Break the node locks of conductors that left the group, so that
        their steps (and the next step of a node whose step they ended) go
        on after ``membership_timeout`` instead of the rest of the lock
        lease (``lock_timeout``). A lock must be seen so in two sweeps in a
        row: a conductor starting takes locks just before it joins. The
        conductor that held it, if only cut off, is fenced by the claim's
        version as when its lease runs out."""
        if alive is None or self.rt.conf.host not in alive:
            self._suspects = set()  # no trustworthy view of the group
            return
        dead = {
            (key, value)
            for key, value in locks.items()
            if holder_host(value) not in (None, *alive)
        }
        for key, value in sorted(dead & self._suspects):
            if self._break_lock(key, value):
                LOG.warning(
                    "Broke a node lock of conductor %s, which left the group: %s",
                    holder_host(value),
                    key,
                )
        self._suspects = dead

    def _break_lock(self, key: str, value: str) -> bool:
        """Break ``key`` if it still holds ``value``; whether it did (a
        failure is tried again on the next sweep)."""
        try:
            broken = self.rt.locks.break_lock(key, value)
        except Exception as exc:
            LOG.debug("Could not break lock %s: %s", key, exc)
            return False
        if broken:
            metrics.LOCKS_BROKEN.inc()
        return bool(broken)

    def resume(
        self, record: IntrospectionRecord, reason: str, cause: str = "owner_left"
    ) -> None:
        """Queue the lost step of ``record`` again, or end it when it
        cannot be resumed (the ramdisk's data never got stored)."""
        step = self._steps.get(record.state)
        if step is None:
            metrics.ORPHANS_RESOLVED.labels("failed").inc()
            LOG.error("Introspection of node %s is lost: %s", record.uuid, reason)
            fail(
                self.rt,
                record.uuid,
                record.version,
                f"Introspection lost: {reason}; it cannot be resumed, start it again",
            )
            return
        LOG.warning(
            "Resuming the %s step of node %s on %s: %s",
            record.state,
            record.uuid,
            self.rt.conf.host,
            reason,
        )
        metrics.ORPHANS_RESOLVED.labels("resumed").inc()
        queued = self._queue.submit(record.uuid, record.version, record.state, step)
        if queued is not None:  # claimed: not a stale or duplicate find
            metrics.STEPS_TAKEN_OVER.labels(record.state, cause).inc()

    def stop(self) -> None:
        self._resumer.shutdown(wait=True)

    def _resume_once(self, orphan: Orphan) -> None:
        try:
            self.resume(orphan.record, orphan.reason, orphan.cause)
        except Exception:
            LOG.exception("Resuming node %s failed", orphan.record.uuid)
        finally:
            self._resuming.discard(orphan.record.uuid)
