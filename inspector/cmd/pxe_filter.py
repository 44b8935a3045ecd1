"""ironic-inspector-pxe-filter: the PXE filter of one DHCP host (split mode).

Run one next to each dnsmasq of the inspection network, with the cluster's
configuration file (the database and Ironic) and that host's
``[dnsmasq_pxe_filter]`` options. It needs neither etcd nor the message
broker. The standalone ``ironic-inspector`` runs the same filter itself.
"""

import logging
import sys
from typing import TYPE_CHECKING

from inspector.cmd import process

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)
PROG = "ironic-inspector-pxe-filter"


def main(argv: list[str] | None = None) -> int:
    process.select_threading_backend()
    from oslo_config import cfg

    from inspector import exceptions

    args = sys.argv[1:] if argv is None else argv
    try:
        conf = process.parse_config(args)
    except cfg.Error as exc:
        process.die(PROG, str(exc))
    process.setup_logging(conf, "ironic-inspector")
    try:
        return _serve(conf, args)
    except exceptions.ConfigError as exc:
        process.die(PROG, str(exc))
    except exceptions.ServiceUnavailable as exc:  # a backend: a restart may help
        process.die(PROG, str(exc), code=1)


def _serve(conf: "cfg.ConfigOpts", args: list[str]) -> int:
    from inspector.server import wiring

    agent = wiring.pxe_agent(conf)
    agent.start()
    LOG.info("%s %s started", PROG, conf.host)
    process.wait_for_stop(conf, args)
    agent.stop()
    LOG.info("%s %s stopped", PROG, conf.host)
    return 0
