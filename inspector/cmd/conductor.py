"""ironic-inspector-conductor: one conductor of the split shape."""

import logging
import sys
from typing import TYPE_CHECKING

from inspector import bootstrap

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)
PROG = "ironic-inspector-conductor"


def main(argv: list[str] | None = None) -> int:
    bootstrap.select_threading_backend()
    from oslo_config import cfg

    from inspector import exceptions

    args = sys.argv[1:] if argv is None else argv
    try:
        conf = bootstrap.parse_config(args)
    except cfg.Error as exc:
        bootstrap.die(PROG, str(exc))
    bootstrap.setup_logging(conf, "ironic-inspector")
    if conf.standalone:
        bootstrap.die(
            PROG,
            "[DEFAULT]standalone is True: run ironic-inspector (API and "
            "conductor in one process) instead, or set standalone = False",
        )
    try:
        return _serve(conf, args)
    except exceptions.ConfigError as exc:
        bootstrap.die(PROG, str(exc))
    except exceptions.ServiceUnavailable as exc:  # a backend: a restart may help
        bootstrap.die(PROG, str(exc), code=1)


def _serve(conf: "cfg.ConfigOpts", args: list[str]) -> int:
    from inspector.server import wiring

    _export_metrics(conf)
    service = wiring.conductor(conf)
    service.start()
    LOG.info("ironic-inspector-conductor %s started", conf.host)
    bootstrap.wait_for_stop(conf, args)
    unfinished = service.stop()
    LOG.info("ironic-inspector-conductor %s stopped", conf.host)
    bootstrap.exit_without(unfinished)
    return 0


def _export_metrics(conf: "cfg.ConfigOpts") -> None:
    """Serve this conductor's recorded values on [metrics]conductor_port."""
    import prometheus_client

    from inspector import exceptions

    address, port = conf.metrics.conductor_address, conf.metrics.conductor_port
    if not port:
        return
    try:
        prometheus_client.start_http_server(port, addr=address)
    except OSError as exc:
        raise exceptions.ConfigError(
            f"Invalid configuration: [metrics]conductor_port {port} on "
            f"{address}: {exc.strerror or exc}"
        ) from exc
    LOG.info("Metrics of this conductor on http://%s:%d/metrics", address, port)
