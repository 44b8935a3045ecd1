"""The split-mode API service: everything one API process holds."""

import logging
import os

from oslo_config import cfg

from inspector import exceptions

LOG = logging.getLogger(__name__)


class ApiService:
    """The Flask app of split mode and the connections behind it.

    The API does not join the conductor group: it reads the live members
    (cached), takes node locks in the coordination backend, and casts work
    to a conductor over the message bus.
    """

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        import oslo_messaging as messaging

        from inspector.api.app import create_app
        from inspector.baremetal.client import BaremetalClient
        from inspector.conductor.rpcapi import ConductorClient
        from inspector.conf import opts, shape
        from inspector.coordination.backend import start_coordinator
        from inspector.coordination.members import GroupMembers
        from inspector.db import engine, migration
        from inspector.locking import factory
        from inspector.runtime import Runtime

        if conf.standalone:
            raise exceptions.ConfigError(
                "[DEFAULT]standalone is True: run ironic-inspector (API and "
                "conductor in one process) instead, or set standalone = False"
            )
        opts.validate(conf)
        shape.check_split(conf)
        self.conf = conf
        self.db = engine.from_conf(conf)
        migration.ensure_schema(self.db)
        # a private member id: API processes never join the group
        self.coordinator = start_coordinator(conf, f"{conf.host}.api.{os.getpid()}")
        try:
            self.transport = messaging.get_rpc_transport(conf)
        except Exception:
            self.coordinator.stop()
            raise
        from inspector.coordination import conductor_state, service_group

        store = conductor_state.for_coordinator(self.coordinator)
        self.members = GroupMembers(
            self.coordinator,
            conf.coordination.member_cache_seconds,
            store,
            stale_ok=True,
        )
        self.runtime = Runtime(
            conf=conf,
            db=self.db,
            baremetal=BaremetalClient(conf),
            locks=factory.from_conf(conf, self.coordinator),
        )
        self.runtime.rpc = ConductorClient(conf, self.transport, self.members)
        self.runtime.conductors = service_group.for_split(self.coordinator, self.db)
        self.app = create_app(self.runtime)
        LOG.info("API service of %s ready (split mode)", conf.host)

    def stop(self) -> None:
        try:
            self.coordinator.stop()
        except Exception as exc:  # stopping must go on whatever the backend says
            LOG.warning("Stopping the coordinator failed: %s", exc)
        self.transport.cleanup()
        self.db.dispose()
