"""ironic-inspector-conductor: one conductor of the split shape."""

import logging
import sys
from typing import TYPE_CHECKING

from inspector.cmd import process

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)
PROG = "ironic-inspector-conductor"


def main(argv: list[str] | None = None) -> int:
    process.select_threading_backend()
    from oslo_config import cfg
    from oslo_log import log

    from inspector import exceptions

    args = sys.argv[1:] if argv is None else argv
    try:
        conf = process.parse_config(args)
    except cfg.Error as exc:
        process.die(PROG, str(exc))
    log.setup(conf, "ironic-inspector")
    if conf.standalone:
        process.die(
            PROG,
            "[DEFAULT]standalone is True: run ironic-inspector (API and "
            "conductor in one process) instead, or set standalone = False",
        )
    try:
        return _serve(conf, args)
    except (exceptions.ConfigError, exceptions.ServiceUnavailable) as exc:
        process.die(PROG, str(exc))


def _serve(conf: "cfg.ConfigOpts", args: list[str]) -> int:
    import oslo_messaging as messaging

    from inspector import version
    from inspector.baremetal.client import BaremetalClient
    from inspector.conductor.rpcapi import RPC_API_VERSION
    from inspector.conductor.service import ConductorService
    from inspector.conf import opts, shape
    from inspector.coordination.backend import start_coordinator
    from inspector.coordination.group import Membership
    from inspector.coordination.members import GroupMembers
    from inspector.db import engine, migration
    from inspector.locking import factory
    from inspector.runtime import Runtime

    opts.validate(conf)
    shape.check_split(conf)
    db = engine.from_conf(conf)
    migration.ensure_schema(db)
    _export_metrics(conf)
    coordinator = start_coordinator(conf, conf.host)
    transport = messaging.get_rpc_transport(conf)
    rt = Runtime(
        conf=conf,
        db=db,
        baremetal=BaremetalClient(conf),
        locks=factory.from_conf(conf, coordinator),
    )
    from inspector.coordination import conductor_state

    store = conductor_state.for_coordinator(coordinator)
    conductor = ConductorService(
        rt,
        transport,
        GroupMembers(coordinator, ttl=0),  # the sweep reads it fresh
        enabled=lambda: (store.get(conf.host) or {}).get("enabled", True),
    )
    membership = Membership(
        coordinator,
        conf.host,
        {
            "host": conf.host,
            "rpc_version": RPC_API_VERSION,
            "version": version.string(),
        },
    )
    conductor.start()
    try:
        # join only once the RPC server listens: members get casts at once
        membership.start()
    except Exception:
        conductor.stop()
        raise
    LOG.info("ironic-inspector-conductor %s started", conf.host)
    process.wait_for_stop(conf, args)
    # leave first so the API stops routing here, then finish work in progress
    membership.stop()
    conductor.stop()
    coordinator.stop()
    transport.cleanup()
    db.dispose()
    LOG.info("ironic-inspector-conductor %s stopped", conf.host)
    return 0


def _export_metrics(conf: "cfg.ConfigOpts") -> None:
    from inspector import exceptions, metrics

    port = conf.metrics.conductor_port
    if not port:
        return
    try:
        metrics.start_exporter(conf.metrics.conductor_address, port)
    except OSError as exc:
        raise exceptions.ConfigError(
            f"Invalid configuration: [metrics]conductor_port {port} on "
            f"{conf.metrics.conductor_address}: {exc.strerror or exc}"
        ) from exc
