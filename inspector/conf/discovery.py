"""Options of the [discovery] group: enrolling unknown machines."""

from oslo_config import cfg, types

GROUP = "discovery"

OPTS = [
    cfg.StrOpt(
        "enroll_node_driver",
        mutable=True,
        default="fake-hardware",
        help="Ironic hardware type of nodes created by discovery "
        "([processing]node_not_found_hook = enroll), e.g. ipmi or redfish.",
    ),
    cfg.DictOpt(
        "enroll_node_fields",
        mutable=True,
        default={},
        help="Other fields of nodes created by discovery, as key:value pairs "
        "(e.g. resource_class:baremetal,conductor_group:rack7). driver and "
        "driver_info come from the other options and the data.",
    ),
    cfg.ListOpt(
        "enabled_bmc_address_version",
        mutable=True,
        item_type=types.String(choices=["4", "6"]),
        default=["4", "6"],
        help="Which BMC address of the ramdisk's data a discovered node gets, "
        "in order of preference: 4 (bmc_address), 6 (bmc_v6address). With "
        "4,6 an IPv4 address wins over an IPv6 one; with 4 alone an IPv6-only "
        "BMC is not recorded.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
