"""ironic-inspector-conductor: one conductor of the split shape."""

import logging
from typing import TYPE_CHECKING

from inspector.cmd import daemon

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)
PROG = "ironic-inspector-conductor"


def main(argv: list[str] | None = None) -> int:
    return daemon.run(PROG, argv, _build, standalone=False)


def _build(conf: "cfg.ConfigOpts") -> list[daemon.Part]:
    from inspector.server import wiring

    _export_metrics(conf)
    return [wiring.conductor(conf)]


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
