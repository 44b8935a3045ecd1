"""The conductor's work queue: a step is claimed on delivery, then run in a
worker thread under the node's lock; what goes wrong ends the introspection
with a message naming the cause (through the ``fail`` the manager gives).
It knows no workflow: a step is any callable taking the claimed record. A
step that makes the next one (a start that got the data: processing)
returns its record; the queue claims it and runs it at once, in the same
worker, under the same lock."""

import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable, Mapping

from inspector import exceptions, faults, metrics
from inspector.db import claims, introspections
from inspector.db.introspections import IntrospectionRecord
from inspector.locking.base import NodeLock
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)

LOCK_TIMEOUT = 60.0
"""Seconds a step waits for a node lock held by other work on the node."""

Step = Callable[[IntrospectionRecord], IntrospectionRecord | None]
"""The work of one state (start, processing, abort) for the record it gets;
the record of the step it makes next, if any."""

Fail = Callable[[Runtime, str, int, str], None]
"""Ends the introspection of a node (uuid, version) in error with a message."""


class WorkQueue:
    """Runs steps in a pool of ``max_concurrency`` workers, one step per
    node at a time in this process."""

    def __init__(
        self, rt: Runtime, fail: Fail, steps: Mapping[str, Step] | None = None
    ) -> None:
        self.rt = rt
        self._fail = fail
        self._steps = steps or {}
        """The step of each state, for a step that makes the next one."""
        self._workers = concurrent.futures.ThreadPoolExecutor(
            max_workers=rt.conf.max_concurrency, thread_name_prefix="work"
        )
        self._active: dict[str, list[str]] = {}
        """Nodes with a step queued or running in this process, and the step
        of each delivery of theirs in hand (more than one while a step ends
        and the cast of the next one arrives)."""
        self._guard = threading.Condition()

    def active(self) -> set[str]:
        with self._guard:
            return set(self._active)

    def submit(
        self, uuid: str, version: int, expected_state: str, step: Step
    ) -> "concurrent.futures.Future[None] | None":
        """Claim the step at once, then run ``step`` in the work pool.

        Claiming on delivery means a step queued behind busy workers (many
        nodes waiting for their power-on slots) is owned by a live conductor
        and never mistaken for a lost one. Returns the queued work, or None
        when the step was dropped (duplicate or stale delivery).

        A node still in hand here (its previous step releasing the lock, a
        resume that is about to find itself stale) does not turn a delivery
        away: only the claim judges it. Turning it away left the next step
        unclaimed until its claim deadline (a ramdisk that posted as soon as
        the node was ``waiting`` had its processing wait
        [coordination]claim_timeout).
        """
        with self._guard:
            self._active.setdefault(uuid, []).append(expected_state)
        try:
            # one statement: the claim fences off any earlier owner, and
            # fails when the step is not the one this delivery was for
            record = claims.claim(
                self.rt.db,
                uuid,
                version,
                self.rt.conf.host,
                self.rt.run_id,
                state=expected_state,
            )
            faults.at("claimed", expected_state, uuid)
            return self._workers.submit(self._run_locked, record, expected_state, step)
        except exceptions.StaleState:
            self._dropped(uuid, version, expected_state)
        except Exception:
            LOG.exception("Could not take the %s step of node %s", expected_state, uuid)
        self._done(uuid)
        return None

    def _dropped(self, uuid: str, version: int, expected_state: str) -> None:
        """Say why a delivery was dropped (a duplicate or stale one)."""
        try:
            record = introspections.get(self.rt.db, uuid)
        except exceptions.NotFound:
            LOG.warning(
                "Introspection of node %s vanished, dropping %s", uuid, expected_state
            )
            return
        LOG.info(
            "Dropping %s work for node %s: it is %s (version %s), "
            "work was for version %s",
            expected_state,
            uuid,
            record.state,
            record.version,
            version,
        )

    def stop(self, timeout: float | None = None) -> dict[str, str]:
        """Wait for queued and running steps to finish, for at most
        ``timeout`` seconds (None: until they have). Returns the steps left
        unfinished (node -> state); the queued ones among them never start,
        and the caller must not wait for the running ones."""
        with self._guard:
            self._guard.wait_for(lambda: not self._active, timeout)
            left = {uuid: steps[-1] for uuid, steps in self._active.items()}
        self._workers.shutdown(wait=not left, cancel_futures=True)
        return left

    def _done(self, uuid: str) -> None:
        with self._guard:
            steps = self._active.get(uuid, [])
            if len(steps) > 1:
                steps.pop(0)
            else:
                self._active.pop(uuid, None)
            self._guard.notify_all()

    def _lock(self, uuid: str) -> NodeLock | None:
        """The node's lock, waiting up to LOCK_TIMEOUT; None if not had.

        A coordination backend that is briefly away (etcd restarting) is
        waited for within the same time instead of abandoning the step.
        """
        lock = self.rt.locks.get_lock(uuid)
        deadline = time.monotonic() + LOCK_TIMEOUT
        away: exceptions.ServiceUnavailable | None = None
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                if away is not None:
                    raise away  # the backend, not other work, kept the lock
                return None
            try:
                return lock if lock.acquire(timeout=left) else None
            except exceptions.ServiceUnavailable as exc:
                if away is None:
                    LOG.warning("Waiting for the lock of node %s: %s", uuid, exc)
                away = exc
                time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))

    def _run_locked(
        self, record: IntrospectionRecord, expected_state: str, step: Step
    ) -> None:
        uuid = record.uuid
        waited = time.monotonic()
        try:
            lock = self._lock(uuid)
        except exceptions.ServiceUnavailable as exc:
            LOG.warning(
                "The %s step of node %s waits for the coordination backend "
                "(%s); it is resumed once the backend answers",
                expected_state,
                uuid,
                exc,
            )
            self._done(uuid)  # the sweep finds the step again and resumes it
            return
        except Exception:
            LOG.exception("Could not lock node %s for %s", uuid, expected_state)
            self._done(uuid)  # the sweep finds the step again and resumes it
            return
        metrics.LOCK_WAIT_SECONDS.observe(time.monotonic() - waited)
        if lock is None:
            self._done(uuid)
            self._fail(
                self.rt,
                uuid,
                record.version,
                f"Could not lock node {uuid} within "
                f"{LOCK_TIMEOUT:.0f} s: other work on it did not finish",
            )
            return
        faults.at("locked", expected_state, uuid)
        LOG.debug(
            "Node %s locked for %s after %.0f ms",
            uuid,
            expected_state,
            (time.monotonic() - waited) * 1000,
        )
        try:
            while True:
                following = step(record)
                LOG.debug("The %s step of node %s ended", expected_state, uuid)
                faults.at("ended", expected_state, uuid)
                if following is None:
                    break
                # claimed here, so a failure is filed against its version
                record = claims.claim(
                    self.rt.db,
                    uuid,
                    following.version,
                    self.rt.conf.host,
                    self.rt.run_id,
                    state=following.state,
                )
                expected_state, step = record.state, self._steps[record.state]
        except exceptions.StaleState:
            LOG.warning(
                "Node %s changed while %s; dropping this work", uuid, expected_state
            )
        except exceptions.ServiceUnavailable as exc:
            # an outage (database, coordination) is not the node's failure:
            # the step stays claimed here with no worker, and this
            # conductor's sweep runs it again once the backend answers
            LOG.warning(
                "The %s step of node %s stopped: %s; it is resumed once the "
                "backend answers",
                expected_state,
                uuid,
                exc,
            )
        except exceptions.InspectorError as exc:
            LOG.error("Introspection of node %s failed: %s", uuid, exc)
            self._fail(self.rt, uuid, record.version, str(exc))
        except Exception as exc:
            LOG.exception("Unexpected error in %s of node %s", expected_state, uuid)
            self._fail(
                self.rt,
                uuid,
                record.version,
                f"Unexpected {type(exc).__name__} while {expected_state}: {exc}",
            )
        finally:
            lock.release()
            self._done(uuid)
