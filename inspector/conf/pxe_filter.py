"""Options of the [pxe_filter] group."""

from oslo_config import cfg

GROUP = "pxe_filter"

OPTS: list[cfg.Opt] = [
    cfg.StrOpt(
        "driver",
        default="noop",
        choices=[("noop", "do not filter DHCP; trust the provisioning network")],
        help="PXE filter driver. Only noop is implemented so far.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
