"""Options of the [port_physnet] group (physnet_cidr_map hook)."""

from oslo_config import cfg

GROUP = "port_physnet"

OPTS: list[cfg.Opt] = [
    cfg.ListOpt(
        "cidr_map",
        default=[],
        help="CIDR:physnet pairs, e.g. 10.10.10.0/24:physnet_a,"
        "2001:db8::/64:physnet_b. The physnet_cidr_map hook sets a port's "
        "physical_network when its NIC has an address in the CIDR (the most "
        "specific one wins).",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
