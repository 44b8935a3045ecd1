"""ironic-inspector: the API and a conductor in one process."""

import logging
import sys
from typing import TYPE_CHECKING

from inspector import bootstrap

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)
PROG = "ironic-inspector"


def main(argv: list[str] | None = None) -> int:
    bootstrap.select_threading_backend()
    from oslo_config import cfg

    from inspector import exceptions

    try:
        args = sys.argv[1:] if argv is None else argv
        conf = bootstrap.parse_config(args)
    except cfg.Error as exc:
        bootstrap.die(PROG, str(exc))
    bootstrap.setup_logging(conf, "ironic-inspector")
    if not conf.standalone:
        bootstrap.die(
            PROG,
            "[DEFAULT]standalone is False: run "
            "ironic-inspector-api-wsgi and ironic-inspector-conductor "
            "instead (split mode), or set standalone = True",
        )
    try:
        return _serve(conf, args)
    except exceptions.ConfigError as exc:
        bootstrap.die(PROG, str(exc))
    except exceptions.ServiceUnavailable as exc:  # a backend: a restart may help
        bootstrap.die(PROG, str(exc), code=1)


def _serve(conf: "cfg.ConfigOpts", args: list[str]) -> int:
    from inspector import exceptions
    from inspector.net.wsgi_server import WSGIServer
    from inspector.server import wiring

    service = wiring.standalone(conf)
    # TLS and socket options are checked before the conductor starts
    server = WSGIServer.from_conf(service.app, conf)
    service.start()
    try:
        server.start()
    except exceptions.ConfigError:
        service.stop()
        raise
    LOG.info("ironic-inspector %s started (standalone)", conf.host)
    bootstrap.wait_for_stop(conf, args)
    server.stop()
    unfinished = service.stop()
    LOG.info("ironic-inspector stopped")
    bootstrap.exit_without(unfinished)
    return 0
