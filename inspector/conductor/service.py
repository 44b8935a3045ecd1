"""The conductor service: RPC server plus periodic tasks."""

import logging

import oslo_messaging as messaging
from oslo_config import cfg

from inspector.conductor.manager import ConductorManager
from inspector.conductor.periodic import PeriodicTask
from inspector.conductor.rpcapi import TOPIC
from inspector.processing import pipeline
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)


class ConductorService:
    """Receives casts on ``Target(topic, server=[DEFAULT]host)``."""

    def __init__(self, rt: Runtime, transport: messaging.Transport) -> None:
        self.rt = rt
        self.manager = ConductorManager(rt, pipeline.load_hooks(rt.conf))
        conf: cfg.ConfigOpts = rt.conf
        target = messaging.Target(topic=TOPIC, server=conf.host)
        self._server = messaging.get_rpc_server(
            transport,
            target,
            [self.manager],
            serializer=None,
            access_policy=messaging.DefaultRPCAccessPolicy,
        )
        # oslo.messaging registers its pool option when the server is built;
        # our option of upstream's name decides how many casts run at once.
        conf.set_override("executor_thread_pool_size", conf.max_concurrency)
        self._periodic = [
            PeriodicTask(
                "timeouts",
                lambda: float(conf.clean_up_period),
                self.manager.check_timeouts,
            ),
        ]

    def start(self) -> None:
        self._server.start()
        for task in self._periodic:
            task.start()
        LOG.info("Conductor %s is listening on topic %s", self.rt.conf.host, TOPIC)

    def stop(self) -> None:
        """Stop taking new work, then wait for work in progress to finish."""
        for task in self._periodic:
            task.stop()
        self._server.stop()
        self._server.wait()
        LOG.info("Conductor %s stopped", self.rt.conf.host)
