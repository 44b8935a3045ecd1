"""ironic-inspector-pxe-filter: the PXE filter of one DHCP host (split mode).

Run one next to each dnsmasq of the inspection network, with the cluster's
configuration file (the database and Ironic) and that host's
``[dnsmasq_pxe_filter]`` options. It needs neither etcd nor the message
broker. The standalone ``ironic-inspector`` runs the same filter itself.
"""

import logging
import sys
from typing import TYPE_CHECKING

from inspector import bootstrap

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)
PROG = "ironic-inspector-pxe-filter"


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
    try:
        return _serve(conf, args)
    except exceptions.ConfigError as exc:
        bootstrap.die(PROG, str(exc))
    except exceptions.ServiceUnavailable as exc:  # a backend: a restart may help
        bootstrap.die(PROG, str(exc), code=1)


def _serve(conf: "cfg.ConfigOpts", args: list[str]) -> int:
    from inspector.server import wiring

    agent = wiring.pxe_agent(conf)
    agent.start()
    LOG.info("%s %s started", PROG, conf.host)
    bootstrap.wait_for_stop(conf, args)
    agent.stop()
    LOG.info("%s %s stopped", PROG, conf.host)
    return 0
