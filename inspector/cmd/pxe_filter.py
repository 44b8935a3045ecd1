"""ironic-inspector-pxe-filter: the PXE filter of one DHCP host (split mode).

Run one next to each dnsmasq of the inspection network, with the cluster's
configuration file (the database and Ironic) and that host's
``[dnsmasq_pxe_filter]`` options. It needs neither etcd nor the message
broker. The standalone ``ironic-inspector`` runs the same filter itself.
"""

from typing import TYPE_CHECKING

from inspector.cmd import daemon

if TYPE_CHECKING:
    from oslo_config import cfg

PROG = "ironic-inspector-pxe-filter"


def main(argv: list[str] | None = None) -> int:
    return daemon.run(PROG, argv, _build)


def _build(conf: "cfg.ConfigOpts") -> list[daemon.Part]:
    from inspector.server import wiring

    return [wiring.pxe_agent(conf)]
