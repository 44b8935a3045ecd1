"""Options of the [pxe_filter] group."""

import logging

from oslo_config import cfg

LOG = logging.getLogger(__name__)

GROUP = "pxe_filter"

OPTS: list[cfg.Opt] = [
    cfg.StrOpt(
        "driver",
        default="noop",
        choices=[("noop", "do not filter DHCP; trust the provisioning network")],
        help="PXE filter driver. Only noop is implemented so far.",
    ),
    cfg.IntOpt(
        "sync_period",
        default=15,
        min=0,
        help="Seconds between PXE filter synchronisations (ironic-inspector's "
        "option). The noop driver keeps no filter, so there is nothing to "
        "synchronise: setting it logs a warning at start-up.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS


def without_effect(conf: cfg.ConfigOpts) -> list[str]:
    """Options set in a configuration file that change nothing here."""
    where = conf.get_location("sync_period", GROUP)
    if where is not None and where.location != cfg.Locations.opt_default:
        return [
            f"[{GROUP}]sync_period ({where.detail}) has no effect: the "
            f"{conf.pxe_filter.driver} PXE filter driver keeps no filter to "
            "synchronise"
        ]
    return []
