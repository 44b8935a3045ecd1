"""Options of the [discovery] group: enrolling unknown machines."""

from oslo_config import cfg

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
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
