"""The conductor service: RPC server plus periodic tasks."""

import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol

import oslo_messaging as messaging
from oslo_config import cfg

from inspector import exceptions
from inspector.conductor.leadership import Leadership
from inspector.conductor.manager import ConductorManager
from inspector.conductor.periodic import PeriodicTask
from inspector.conductor.rpcapi import TOPIC
from inspector.conf import default
from inspector.db import hardware_runs
from inspector.follow.notified import Listener
from inspector.follow.poller import Follower
from inspector.hooks import pipeline
from inspector.outages import OutageLog
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)


class Members(Protocol):
    def hosts(self) -> list[str]:
        """Hosts of the live conductors."""


class RpcServer(Protocol):
    """What delivers casts to the manager: oslo.messaging's RPC server or
    the JSON-RPC endpoint (:mod:`inspector.jsonrpc.server`)."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def wait(self) -> None: ...


ServerFactory = Callable[[ConductorManager], RpcServer]


def oslo_server(transport: messaging.Transport) -> ServerFactory:
    """Casts from the message broker, on ``Target(topic, server=host)``."""

    def build(manager: ConductorManager) -> RpcServer:
        conf = manager.rt.conf
        target = messaging.Target(topic=TOPIC, server=conf.host)
        server = messaging.get_rpc_server(
            transport,
            target,
            [manager],
            serializer=None,
            access_policy=messaging.ExplicitRPCAccessPolicy,
        )
        # oslo.messaging registers its pool option when the server is built;
        # a file that sets it wins over this default
        conf.set_default(
            "executor_thread_pool_size",
            min(conf.max_concurrency, default.CAST_THREADS),
        )
        return server

    return build


class ConductorService:
    """Receives casts through the server ``serve`` builds for its manager."""

    def __init__(
        self,
        rt: Runtime,
        serve: ServerFactory,
        members: Members,
        enabled: Callable[[], bool] | None = None,
    ) -> None:
        self.rt = rt
        self.members = members
        self._enabled = enabled
        """Whether an operator left this conductor enabled (split mode). A
        disabled one finishes its own work but leads nothing."""
        self.manager = ConductorManager(rt, pipeline.load_hooks(rt.conf))
        conf: cfg.ConfigOpts = rt.conf
        self._sweep_outage = OutageLog(LOG, "Looking for lost work")
        self._state_outage = OutageLog(
            LOG, f"Reading whether conductor {conf.host} is enabled"
        )
        self.leadership = Leadership(
            rt.db, f"{conf.host}/{rt.run_id}", conf.coordination.leader_lease
        )
        self._server = serve(self.manager)
        self._periodic = [
            PeriodicTask(
                "cluster",
                lambda: min(
                    conf.coordination.sweep_interval,
                    conf.coordination.leader_lease / 3,
                ),
                self._cluster_duties,
            ),
            PeriodicTask(
                "timeouts",
                lambda: float(conf.clean_up_period),
                self._timeouts,
            ),
            PeriodicTask(
                "reconcile",
                lambda: float(conf.processing.sync_interval),
                self._reconcile,
            ),
            PeriodicTask(
                "history",
                lambda: float(conf.history.prune_interval),
                self._prune_history,
            ),
        ]
        self._pruning = hardware_runs.Pruning()
        self.follower: Follower | None = None
        self._listener: Listener | None = None
        if conf.ironic_follow.enabled:
            self.follower = Follower(rt)
            if conf.ironic_follow.notifications:
                self._listener = Listener(conf, self.follower)
            # a poll every poll_interval from the last one's start: a burst's
            # long poll must not push the next a whole interval further
            self._periodic.append(
                PeriodicTask(
                    "follow-ironic",
                    lambda: float(conf.ironic_follow.poll_interval),
                    self._follow,
                    fixed_rate=True,
                )
            )

    def _cluster_duties(self) -> None:
        """Renew (or try to take) the lead, then look for lost work: all of
        it as the leader, only this host's from before a restart otherwise."""
        if self._may_lead():
            leader = self.leadership.renew()
        else:
            if self.leadership.is_leader():
                LOG.info(
                    "Conductor %s is disabled: giving up the lead", self.rt.conf.host
                )
            self.leadership.resign()
            leader = False
        try:
            self.manager.sweep(self.members.hosts, leader)
        except exceptions.DatabaseUnavailable as exc:  # one line per outage
            self._sweep_outage.failed(f"the database is unreachable: {exc.reason}")
        else:
            self._sweep_outage.ok()

    def _may_lead(self) -> bool:
        if self._enabled is None:
            return True
        try:
            enabled = self._enabled()
        except Exception as exc:  # the backend is away: keep doing the duties
            self._state_outage.failed(exc)
            return True
        self._state_outage.ok()
        return enabled

    def _reconcile(self) -> None:
        """Owed Ironic writes and deleted nodes, by the leader only."""
        from inspector.conductor import reconcile

        if not self.leadership.is_leader():
            return
        try:
            report = reconcile.sync(self.rt, drift=False)
        except exceptions.InspectorError as exc:
            LOG.warning("Reconcile skipped: %s", exc)
            return
        for finding in report.findings:
            LOG.info(
                "Reconcile: node %s %s (%s): %s",
                finding.node,
                finding.kind,
                finding.detail,
                finding.action,
            )

    def _prune_history(self) -> None:
        """Old runs of the hardware history, by the leader only, a batch
        at a time (never in the processing step)."""
        if not self.leadership.is_leader():
            return
        history = self.rt.conf.history
        deleted = hardware_runs.prune(
            self.rt.db,
            self._pruning,
            keep_runs=history.keep_runs,
            max_age_days=history.max_age_days,
            batch=history.prune_batch,
        )
        if deleted:
            LOG.info("Pruned %d runs of the hardware history", deleted)

    def _follow(self) -> None:
        """Ironic's own inspections into the history, by the leader only
        (a new leader's first poll scans the whole node list)."""
        assert self.follower is not None
        if not self.leadership.is_leader():
            self.follower.reset()
            return
        self.follower.poll()

    def _timeouts(self) -> None:
        if self.leadership.is_leader():
            self.manager.check_timeouts()

    def start(self) -> None:
        self._server.start()
        self._cluster_duties()  # at once: work this host lost in a restart
        for task in self._periodic:
            task.start()
        if self._listener is not None:
            self._listener.start()
        LOG.info("Conductor %s takes casts", self.rt.conf.host)

    def stop(self, timeout: float | None = None, grace: float = 0.0) -> dict[str, str]:
        """Stop taking new work, then let the work in progress finish.

        Leadership goes at once (another conductor leads), the periodic
        duties stop (this conductor resumes nothing more), and the JSON-RPC
        endpoint refuses new calls (until the work is done). The broker's
        casts are still taken for ``grace`` seconds: those the API routed
        here before it saw that this conductor stops; then the RPC server
        stops listening. Work in
        progress gets ``timeout`` seconds in all (None: until it ends).
        Returns the steps left unfinished (node -> state): their threads
        still run, so the caller ends the process once it left the group.
        """
        started = time.monotonic()
        for task in self._periodic:
            task.stop()
        if self._listener is not None:
            self._listener.stop()
        self.leadership.resign()  # another conductor leads at once
        self.manager.draining = True
        # the JSON-RPC endpoint answers "stopping" until the end (the API
        # calls another conductor at once); the broker's listener stops
        answers = bool(getattr(self._server, "refuses_while_draining", False))
        if grace > 0:
            threading.Event().wait(grace)
        if not answers:
            self._server.stop()
            self._server.wait()
        LOG.info(
            "Conductor %s takes no more casts; finishing its %d step(s)",
            self.rt.conf.host,
            len(self.manager.queue.active()),
        )
        left = None
        if timeout is not None:
            left = max(0.0, timeout - (time.monotonic() - started))
        unfinished = self.manager.stop(left)
        if answers:
            self._server.stop()
            self._server.wait()
        if unfinished:
            LOG.warning(
                "Conductor %s stops with %d step(s) unfinished after %s s "
                "([DEFAULT]graceful_shutdown_timeout): %s; %s",
                self.rt.conf.host,
                len(unfinished),
                f"{timeout or 0:.0f}",
                ", ".join(f"node {u} ({s})" for u, s in sorted(unfinished.items())),
                "this process resumes them when it starts again"
                if self.rt.conf.standalone
                else "the leader resumes them once this conductor has left the group",
            )
        else:
            LOG.info("Conductor %s stopped", self.rt.conf.host)
        return unfinished
