"""ironic-inspector: the API and a conductor in one process."""

import logging
import sys
from typing import TYPE_CHECKING

from inspector.cmd import process

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)
PROG = "ironic-inspector"


def main(argv: list[str] | None = None) -> int:
    process.select_threading_backend()
    from oslo_config import cfg
    from oslo_log import log

    from inspector import exceptions

    try:
        args = sys.argv[1:] if argv is None else argv
        conf = process.parse_config(args)
    except cfg.Error as exc:
        process.die(PROG, str(exc))
    log.setup(conf, "ironic-inspector")
    if not conf.standalone:
        process.die(
            PROG,
            "[DEFAULT]standalone is False: run "
            "ironic-inspector-api-wsgi and ironic-inspector-conductor "
            "instead (split mode), or set standalone = True",
        )
    try:
        return _serve(conf, args)
    except exceptions.ConfigError as exc:
        process.die(PROG, str(exc))


def _serve(conf: "cfg.ConfigOpts", args: list[str]) -> int:
    import oslo_messaging as messaging

    from inspector import exceptions
    from inspector.api.app import create_app
    from inspector.baremetal.client import BaremetalClient
    from inspector.conductor.rpcapi import ConductorClient
    from inspector.conductor.service import ConductorService
    from inspector.conf import opts
    from inspector.coordination.members import FixedConductor
    from inspector.db import engine, migration
    from inspector.locking import factory
    from inspector.runtime import Runtime
    from inspector.wsgi_server import WSGIServer

    opts.validate(conf)
    db = engine.from_conf(conf)
    migration.ensure_schema(db)
    transport = messaging.get_rpc_transport(conf, url="fake://")
    rt = Runtime(
        conf=conf, db=db, baremetal=BaremetalClient(conf), locks=factory.from_conf(conf)
    )
    from inspector.coordination import conductor_state, service_group

    store = conductor_state.DatabaseStore(db)
    rt.rpc = ConductorClient(conf, transport, FixedConductor(conf.host, store))
    rt.conductors = service_group.for_standalone(db, conf)
    conductor = ConductorService(rt, transport, FixedConductor(conf.host))
    server = WSGIServer(
        create_app(rt), conf.listen_address, conf.listen_port, conf.api_threads
    )
    conductor.start()
    try:
        server.start()
    except exceptions.ConfigError:
        conductor.stop()
        raise
    LOG.info("ironic-inspector %s started (standalone)", conf.host)
    process.wait_for_stop(conf, args)
    server.stop()
    conductor.stop()
    transport.cleanup()
    db.dispose()
    LOG.info("ironic-inspector stopped")
    return 0
