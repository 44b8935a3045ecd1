"""Server side of the conductor RPC API: the work each cast asks for."""

import concurrent.futures
import datetime
import logging
import threading
import time
from collections.abc import Callable, Collection
from typing import Any

import oslo_messaging as messaging

from inspector import data_store, exceptions, metrics, states
from inspector.conductor import node_processing, takeover
from inspector.conductor.power import PowerOnPacer
from inspector.conductor.rpcapi import RPC_API_VERSION
from inspector.db import introspections, stored_data
from inspector.db.introspections import Introspection
from inspector.processing import owed
from inspector.processing.base import ProcessingHook
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)

LOCK_TIMEOUT = 60.0
"""Seconds a cast waits for a node lock held by other work on the node."""


class ConductorManager:
    """RPC endpoint. Every method is idempotent: a cast for a version that
    is no longer current (duplicate or stale delivery) is dropped."""

    target = messaging.Target(version=RPC_API_VERSION)

    def __init__(self, rt: Runtime, hooks: list[ProcessingHook]) -> None:
        self.rt = rt
        self.hooks = hooks
        self.pacer = PowerOnPacer(lambda: float(rt.conf.introspection_delay), rt.db)
        self.host: str = rt.conf.host
        self._workers = concurrent.futures.ThreadPoolExecutor(
            max_workers=rt.conf.max_concurrency, thread_name_prefix="work"
        )
        self._resuming: set[str] = set()
        self._active: set[str] = set()
        """Nodes whose step is queued or running in this process."""
        self._active_guard = threading.Lock()
        self._resumer = concurrent.futures.ThreadPoolExecutor(
            max_workers=4, thread_name_prefix="resume"
        )
        self._steps: dict[str, Callable[[Introspection], None]] = {
            states.STARTING: self._start,
            states.PROCESSING: self._process,
            states.REAPPLYING: self._process,
            states.ABORTING: self._abort,
        }

    # RPC methods

    def start_introspection(
        self, ctxt: dict[str, Any], uuid: str, version: int, **_: Any
    ) -> None:
        """Boot the node into the ramdisk: PXE boot device, power on."""
        self._with_node(uuid, version, states.STARTING, self._start)

    def process(self, ctxt: dict[str, Any], uuid: str, version: int) -> None:
        """Process the stored ramdisk data and write the results to Ironic."""
        self._with_node(uuid, version, states.PROCESSING, self._process)

    def reapply(self, ctxt: dict[str, Any], uuid: str, version: int) -> None:
        """Re-run processing on the stored data; the node is not rebooted."""
        self._with_node(uuid, version, states.REAPPLYING, self._process)

    def abort(self, ctxt: dict[str, Any], uuid: str, version: int) -> None:
        """Power the node off and end its introspection as canceled."""
        self._with_node(uuid, version, states.ABORTING, self._abort)

    def resume(self, record: Introspection, reason: str) -> None:
        """Take over a lost step (:mod:`inspector.conductor.takeover`) and run
        it again from what is stored: every step can be repeated safely."""
        work = self._steps.get(record.state)
        if work is None:  # enrolling: the ramdisk's data never got stored
            metrics.ORPHANS_RESOLVED.labels("failed").inc()
            LOG.error("Introspection of node %s is lost: %s", record.uuid, reason)
            self._fail(
                record.uuid,
                record.version,
                f"Introspection lost: {reason}; it cannot be resumed, start it again",
            )
            return
        LOG.warning(
            "Resuming the %s step of node %s on %s: %s",
            record.state,
            record.uuid,
            self.host,
            reason,
        )
        metrics.ORPHANS_RESOLVED.labels("resumed").inc()
        # queued in the work pool like any step: every lost step of a dead
        # conductor is taken over at once, not a few at a time
        self._with_node(record.uuid, record.version, record.state, work)

    # periodic work

    def sweep(self, alive: Callable[[], Collection[str]], leader: bool) -> int:
        """Find lost steps (see :mod:`inspector.conductor.takeover`) and
        resume them in the background; returns how many were found."""
        records = introspections.working(self.rt.db)
        hosts: Collection[str] = ()
        if leader and any(r.owner not in (None, self.host) for r in records):
            try:
                hosts = alive()
            except exceptions.ServiceUnavailable as exc:
                # never mistake an unreachable backend for dead conductors
                LOG.warning("Not looking for lost work this time: %s", exc)
                return 0
        now = introspections.utcnow()
        found = [
            o
            for o in takeover.orphans(
                records, hosts, self.host, self.rt.run_id, now, leader
            )
            if o.record.uuid not in self._resuming
        ]
        with self._active_guard:
            active = set(self._active)
        for record in records:
            if (
                record.owner == self.host
                and record.owner_run == self.rt.run_id
                and record.uuid not in active
                and record.uuid not in self._resuming
            ):
                # claimed here, but no worker has it: its work ended early
                found.append(
                    takeover.Orphan(
                        record,
                        f"its {record.state} step on {self.host} ended unfinished",
                    )
                )
        for orphan in found:
            self._resuming.add(orphan.record.uuid)
            self._resumer.submit(self._resume_once, orphan)
        return len(found)

    def _resume_once(self, orphan: takeover.Orphan) -> None:
        try:
            self.resume(orphan.record, orphan.reason)
        except Exception:
            LOG.exception("Resuming node %s failed", orphan.record.uuid)
        finally:
            self._resuming.discard(orphan.record.uuid)

    def stop(self) -> None:
        """Wait for work in progress (queued steps included) to finish."""
        self._resumer.shutdown(wait=True)
        self._workers.shutdown(wait=True)

    def check_timeouts(self) -> int:
        """End introspections running longer than [DEFAULT]timeout."""
        timeout = self.rt.conf.timeout
        if not timeout:
            return 0
        cutoff = introspections.utcnow() - datetime.timedelta(seconds=timeout)
        ended = 0
        for record in introspections.timed_out(self.rt.db, cutoff):
            lock = self.rt.locks.get_lock(record.uuid)
            if not lock.acquire(blocking=False):
                continue
            try:
                introspections.transition(
                    self.rt.db,
                    record.uuid,
                    states.TIMEOUT,
                    expected_version=record.version,
                    error=states.TIMEOUT_MESSAGE,
                )
            except exceptions.StaleState:
                continue
            finally:
                lock.release()
            ended += 1
            LOG.error(
                "Introspection of node %s timed out after %s s", record.uuid, timeout
            )
            if record.manage_boot:
                self._power_off(record.uuid, "after timeout")
        return ended

    # internals

    def _with_node(
        self,
        uuid: str,
        version: int,
        expected_state: str,
        work: Callable[[Introspection], None],
    ) -> "concurrent.futures.Future[None] | None":
        """Claim the step at once, then run ``work`` in the work pool.

        Claiming on delivery means a step queued behind busy workers (many
        nodes waiting for their power-on slots) is owned by a live conductor
        and never mistaken for a lost one. Returns the queued work, or None
        when the step was dropped (duplicate or stale delivery).
        """
        try:
            record = introspections.get(self.rt.db, uuid)
        except exceptions.NotFound:
            LOG.warning(
                "Introspection of node %s vanished, dropping %s", uuid, expected_state
            )
            return None
        if record.version != version or record.state != expected_state:
            LOG.info(
                "Dropping %s work for node %s: it is %s (version %s), "
                "work was for version %s",
                expected_state,
                uuid,
                record.state,
                record.version,
                version,
            )
            return None
        with self._active_guard:
            if uuid in self._active:
                LOG.info("Node %s is already being worked on here", uuid)
                return None
            self._active.add(uuid)
        try:
            if record.owner != self.host or record.owner_run != self.rt.run_id:
                # fences off any earlier owner from here on
                record = introspections.claim(
                    self.rt.db, uuid, record.version, self.host, self.rt.run_id
                )
            return self._workers.submit(self._run_locked, record, expected_state, work)
        except exceptions.StaleState:
            LOG.info("Node %s changed before %s could start", uuid, expected_state)
        except Exception:
            LOG.exception("Could not take the %s step of node %s", expected_state, uuid)
        self._done(uuid)
        return None

    def _done(self, uuid: str) -> None:
        with self._active_guard:
            self._active.discard(uuid)

    def _lock(self, uuid: str) -> Any:
        """The node's lock, waiting up to LOCK_TIMEOUT; None if not had.

        A coordination backend that is briefly away (etcd restarting) is
        waited for within the same time instead of abandoning the step.
        """
        lock = self.rt.locks.get_lock(uuid)
        deadline = time.monotonic() + LOCK_TIMEOUT
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                return lock if lock.acquire(timeout=left) else None
            except exceptions.ServiceUnavailable as exc:
                LOG.warning("Waiting for the lock of node %s: %s", uuid, exc)
                time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))

    def _run_locked(
        self,
        record: Introspection,
        expected_state: str,
        work: Callable[[Introspection], None],
    ) -> None:
        uuid = record.uuid
        waited = time.monotonic()
        try:
            lock = self._lock(uuid)
        except Exception:
            LOG.exception("Could not lock node %s for %s", uuid, expected_state)
            self._done(uuid)  # the sweep finds the step again and resumes it
            return
        metrics.LOCK_WAIT_SECONDS.observe(time.monotonic() - waited)
        if lock is None:
            self._done(uuid)
            self._fail(
                uuid,
                record.version,
                f"Could not lock node {uuid} within "
                f"{LOCK_TIMEOUT:.0f} s: other work on it did not finish",
            )
            return
        try:
            work(record)
        except exceptions.StaleState:
            LOG.warning(
                "Node %s changed while %s; dropping this work", uuid, expected_state
            )
        except exceptions.InspectorError as exc:
            LOG.error("Introspection of node %s failed: %s", uuid, exc)
            self._fail(uuid, record.version, str(exc))
        except Exception as exc:
            LOG.exception("Unexpected error in %s of node %s", expected_state, uuid)
            self._fail(
                uuid,
                record.version,
                f"Unexpected {type(exc).__name__} while {expected_state}: {exc}",
            )
        finally:
            lock.release()
            self._done(uuid)

    def _fail(self, uuid: str, version: int, message: str) -> None:
        try:
            failed = introspections.transition(
                self.rt.db, uuid, states.FAIL, expected_version=version, error=message
            )
        except (
            exceptions.StaleState,
            exceptions.NotFound,
            exceptions.InvalidTransition,
        ) as exc:
            LOG.warning(
                "Could not record the failure of node %s (%s): %s", uuid, message, exc
            )
            return
        if self.rt.conf.processing.store_data != "database":
            store = data_store.for_conf(self.rt.conf, self.rt.db)
            store.keep(uuid, None)
            store.settle(failed)

    def _start(self, record: Introspection) -> None:
        uuid = record.uuid
        if record.manage_boot:
            self.pacer.wait()
            self._fence(record)
            try:
                self.rt.baremetal.set_boot_device(uuid, "pxe", persistent=False)
            except exceptions.InspectorError as exc:
                raise exceptions.InspectorError(
                    f"Failed to set boot device to PXE: {exc}"
                ) from exc
            self._fence(record)
            try:
                self.rt.baremetal.set_power_state(uuid, "rebooting")
            except exceptions.InspectorError as exc:
                raise exceptions.InspectorError(
                    f"Failed to power on the node: {exc}"
                ) from exc
            LOG.info("Node %s is booting into the introspection ramdisk", uuid)
        else:
            LOG.info(
                "Node %s: boot is managed by the operator; waiting for the ramdisk",
                uuid,
            )
        introspections.transition(
            self.rt.db, uuid, states.WAIT, expected_version=record.version
        )

    def _process(self, record: Introspection) -> None:
        uuid = record.uuid
        raw = stored_data.get(self.rt.db, uuid, processed=False)
        self._fence(record)
        started = time.monotonic()
        result = "error"
        pending: owed.WritesOwed | None = None
        power_off = (
            record.state == states.PROCESSING
            and record.manage_boot
            and self.rt.conf.processing.power_off
        )
        try:
            processed = node_processing.process_data(self.rt, self.hooks, uuid, raw)
            result = "success"
        except owed.WritesOwed as exc:  # Ironic is away: keep the results
            pending, processed, result = exc, exc.data, "pending"
        except owed.TEMPORARY as exc:  # away before anything was written
            pending = owed.WritesOwed({"reprocess": True}, exc.message, raw)
            processed, result = None, "pending"
        finally:
            metrics.PROCESSING_SECONDS.labels(result).observe(
                time.monotonic() - started
            )
        if power_off and pending is None:
            self._fence(record)
            try:
                self.rt.baremetal.set_power_state(uuid, "power off")
            except owed.TEMPORARY as exc:
                pending = owed.WritesOwed({}, exc.message, processed or {})
            except exceptions.InspectorError as exc:
                raise exceptions.InspectorError(
                    f"Failed to power off the node after processing: {exc}"
                ) from exc
        # a node whose results Ironic did not take keeps them in the database
        # whatever the store: they are what the reconcile makes later
        store = data_store.for_conf(self.rt.conf, self.rt.db)
        if pending is not None and processed is not None:
            stored_data.store(self.rt.db, uuid, processed, processed=True)
        elif pending is None:
            store.keep(uuid, processed)
        writes = None
        if pending is not None:
            pending.writes["power_off"] = power_off
            writes = (owed.dumps(pending.writes), pending.reason)
            LOG.warning(
                "Introspection of node %s finished, but Ironic did not take "
                "its results (%s): pending %s; the reconcile will make them",
                uuid,
                pending.reason,
                owed.describe(pending.writes),
            )
        finished = introspections.transition(
            self.rt.db,
            uuid,
            states.FINISH,
            expected_version=record.version,
            owed=writes,
        )
        if pending is None:
            store.settle(finished)
        LOG.info("Introspection of node %s finished", uuid)

    def _abort(self, record: Introspection) -> None:
        if record.manage_boot:
            self._fence(record)
            self._power_off(record.uuid, "on abort")
        introspections.transition(
            self.rt.db,
            record.uuid,
            states.ABORT_END,
            expected_version=record.version,
            error=states.ABORTED_MESSAGE,
        )
        LOG.info("Introspection of node %s aborted", record.uuid)

    def _fence(self, record: Introspection) -> None:
        """Before acting on Ironic: is this work still ours? A conductor that
        was paused (or cut off) while another took the step over stops here
        instead of writing to Ironic on stale authority."""
        introspections.check_current(self.rt.db, record.uuid, record.version)

    def _power_off(self, uuid: str, why: str) -> None:
        try:
            self.rt.baremetal.set_power_state(uuid, "power off")
        except exceptions.InspectorError as exc:
            LOG.warning("Could not power off node %s %s: %s", uuid, why, exc)
