"""Options of the [pxe_filter] group."""

import logging

from oslo_config import cfg

from inspector import exceptions

LOG = logging.getLogger(__name__)

GROUP = "pxe_filter"

OPTS: list[cfg.Opt] = [
    cfg.StrOpt(
        "driver",
        default="iptables",
        choices=[
            ("noop", "do not filter DHCP; trust the provisioning network"),
            ("iptables", "ironic-inspector's default; not available yet"),
            ("dnsmasq", "not available yet"),
        ],
        help="PXE filter driver. The default is ironic-inspector's, "
        "iptables; only noop is implemented so far, so the service refuses "
        "to start with the others (and with the default) rather than leave "
        "the DHCP server open without saying so.",
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


AVAILABLE = ("noop",)


def check_driver(conf: cfg.ConfigOpts) -> None:
    """Refuse a driver this release cannot run, in the processes that
    would run it (the standalone process and conductors; not the API)."""
    driver = conf.pxe_filter.driver
    if driver in AVAILABLE:
        return
    where = conf.get_location("driver", GROUP)
    source = (
        f"set in {where.detail}"
        if where is not None and where.location != cfg.Locations.opt_default
        else "the default, as in ironic-inspector"
    )
    raise exceptions.ConfigError(
        f"Invalid configuration: [{GROUP}]driver = {driver} ({source}) is not "
        f"available in this release: set [{GROUP}]driver = noop, and keep "
        "machines that are not being introspected off the inspection network "
        "by other means (doc/upgrade.md)"
    )


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
