"""A conductor's membership of the service group, kept alive on an OS thread."""

import datetime
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import tooz
from tooz import coordination

from inspector import exceptions
from inspector.coordination.backend import GROUP_ID, translated
from inspector.coordination.members import DRAINING
from inspector.outages import OutageLog

LOG = logging.getLogger(__name__)

MIN_BEAT = 0.5
MAX_BEAT = 5.0
SLOW_BEAT_EVERY = 60.0
"""Seconds between two warnings that heartbeats run late."""


class Membership:
    """Joins the group as ``host``, heartbeats, re-joins when dropped, leaves.

    A membership lease can expire while the process is alive (a long pause,
    a backend restart); tooz then renews the lease but does not put the
    member back, so every beat also checks that this host is still listed.

    Beats keep a fixed rate: the next one is due a third of the lease after
    the last one began (the lease is renewed first thing in a beat), not
    after it ended. A beat is three requests (renew, publish
    ``last_heartbeat``, check the membership; tooz's non-etcd drivers
    renew their locks in it too) and may join again, so on a loaded host it
    can take seconds; waiting a full third after that left the lease
    unrenewed for longer than itself.
    """

    def __init__(
        self,
        coordinator: coordination.CoordinationDriver,
        host: str,
        capabilities: dict[str, Any],
        backend: str = "the coordination backend",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._coordinator = coordinator
        self.host = host
        self.member_id = host.encode()
        self.capabilities = dict(capabilities)
        self.capabilities.setdefault(
            "started_at", datetime.datetime.now(datetime.UTC).isoformat()
        )
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._beat, name="coordination-heartbeat", daemon=True
        )
        self.rejoins = 0
        self._no_updates = False
        self._clock = clock
        self._late_warned: float | None = None
        self._late_since_warned = 0
        self._last_worked = True
        self._outage = OutageLog(LOG, f"The heartbeat of conductor {host} to {backend}")

    def start(self) -> None:
        """Join the group (creating it when needed) and start heartbeating.

        A heartbeat first: a start-up slower than the membership lease
        (an overloaded host) lets the lease the coordinator made at its
        start expire, and etcd then refuses the join ("Not Found"); the
        heartbeat makes a new lease for an expired one."""
        with translated("heartbeat"):
            self._coordinator.heartbeat()
        self._join()
        self._thread.start()

    def _join(self) -> None:
        with translated("join the conductor group"):
            try:
                self._coordinator.create_group(GROUP_ID).get()
            except coordination.GroupAlreadyExist:
                pass
            try:
                self._coordinator.join_group(GROUP_ID, self.capabilities).get()
            except coordination.MemberAlreadyExist:
                # our own earlier incarnation (a restart before its lease
                # expired): take the place over instead of waiting it out
                LOG.info("Member %s already in the group, joining again", self.host)
                self._coordinator.leave_group(GROUP_ID).get()
                self._coordinator.join_group(GROUP_ID, self.capabilities).get()
        LOG.info("Joined conductor group as %s", self.host)

    def is_member(self) -> bool:
        with translated("list the conductor group"):
            members = self._coordinator.get_members(GROUP_ID).get()
        return self.member_id in members

    def beat_once(self) -> float:
        """One heartbeat plus a membership check; returns the next wait."""
        with translated("heartbeat"):
            interval = self._coordinator.heartbeat()
        self._publish_heartbeat()
        if not self.is_member():
            LOG.warning(
                "Conductor %s is no longer in the group (its membership "
                "expired); joining again",
                self.host,
            )
            self._join()
            self.rejoins += 1
        wait = float(interval or MAX_BEAT * 3) / 3
        return min(max(wait, MIN_BEAT), MAX_BEAT)

    def _publish_heartbeat(self) -> None:
        """Refresh ``last_heartbeat`` in this member's capabilities (for
        ``conductor show``); backends without capability updates are skipped."""
        if self._no_updates:
            return
        self.capabilities["last_heartbeat"] = datetime.datetime.now(
            datetime.UTC
        ).isoformat()
        try:
            with translated("publish the heartbeat"):
                self._coordinator.update_capabilities(GROUP_ID, self.capabilities).get()
        except exceptions.ServiceUnavailable as exc:
            if isinstance(exc.__cause__, tooz.NotImplemented | NotImplementedError):
                self._no_updates = True  # e.g. the file driver
            elif not isinstance(exc.__cause__, coordination.MemberNotJoined):
                raise  # MemberNotJoined: the membership check joins again

    def _beat(self) -> None:
        wait = MIN_BEAT
        while not self._stop.wait(wait):
            wait = self._beat_and_time()

    def _beat_and_time(self) -> float:
        """One beat, with its failures logged; returns the wait until the
        next one, counted from when this one began.

        A late beat is said only between two that worked: a failed one is
        said by the outage log, and the first one after it (a reconnection,
        a re-join) is slow because of the outage, not the host."""
        began = self._clock()
        worked = False
        try:
            period = self.beat_once()
            worked = True
        except exceptions.ServiceUnavailable as exc:
            self._outage.failed(exc)
            period = MIN_BEAT * 2
        except Exception:  # the heartbeat must never die
            LOG.exception("Unexpected heartbeat failure of %s", self.host)
            period = MIN_BEAT * 2
        else:
            self._outage.ok()
        took = self._clock() - began
        if took > period and worked and self._last_worked:
            self._late(took, period)
        self._last_worked = worked
        return max(0.0, period - took)

    def _late(self, took: float, period: float) -> None:
        """Say, at most every SLOW_BEAT_EVERY seconds, that a beat took
        longer than the time between beats."""
        now = self._clock()
        if self._late_warned is not None and now - self._late_warned < SLOW_BEAT_EVERY:
            self._late_since_warned += 1
            return
        LOG.warning(
            "A heartbeat of conductor %s took %.1f s, longer than the %.1f s "
            "between two (a third of the membership lease, 5 s at most)%s: "
            "this host or the coordination backend is overloaded, and the "
            "membership expires (the conductor leaves the group, its work is "
            "taken over) once a beat takes longer than the whole lease",
            self.host,
            took,
            period,
            f"; {self._late_since_warned} more since the last warning"
            if self._late_since_warned
            else "",
        )
        self._late_warned = now
        self._late_since_warned = 0

    def drain(self) -> bool:
        """Say in the group that this conductor stops: readers route no new
        work here, while the membership (and with it the ownership of the
        work in progress) is kept until :meth:`stop`. Returns whether the
        backend took it; one without capability updates (tooz's file
        driver) cannot say it, and the caller leaves the group instead.
        """
        self.capabilities[DRAINING] = True  # a re-join keeps saying it
        if self._no_updates:
            return False
        try:
            with translated("publish that this conductor stops"):
                self._coordinator.update_capabilities(GROUP_ID, self.capabilities).get()
        except exceptions.ServiceUnavailable as exc:
            if isinstance(exc.__cause__, tooz.NotImplemented | NotImplementedError):
                self._no_updates = True
                return False
            LOG.warning(
                "Conductor %s could not say in the group that it stops: %s",
                self.host,
                exc,
            )
            return False
        LOG.info(
            "Conductor %s stops: it takes no new work and finishes what it has",
            self.host,
        )
        return True

    def stop(self) -> None:
        """Stop heartbeating and leave the group (best effort)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(10)
        try:
            with translated("leave the conductor group"):
                self._coordinator.leave_group(GROUP_ID).get()
            LOG.info("Conductor %s left the group", self.host)
        except (exceptions.ServiceUnavailable, coordination.MemberNotJoined) as exc:
            LOG.warning("Conductor %s could not leave the group: %s", self.host, exc)
