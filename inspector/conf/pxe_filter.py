"""Options of the [pxe_filter] group."""

import logging

from oslo_config import cfg

from inspector import exceptions

LOG = logging.getLogger(__name__)

GROUP = "pxe_filter"
DNSMASQ_GROUP = "dnsmasq_pxe_filter"
IPTABLES_GROUP = "iptables"

OPTS: list[cfg.Opt] = [
    cfg.StrOpt(
        "driver",
        default="iptables",
        choices=[
            ("noop", "do not filter DHCP; trust the provisioning network"),
            (
                "iptables",
                "ironic-inspector's default: a chain of MAC rules in front of "
                "the DHCP server's port ([iptables]), rewritten in one "
                "iptables-restore batch",
            ),
            (
                "dnsmasq",
                "one file per MAC in dnsmasq's --dhcp-hostsdir "
                "([dnsmasq_pxe_filter]): the standalone process filters, in "
                "split mode ironic-inspector-pxe-filter next to each dnsmasq",
            ),
        ],
        help="PXE filter driver (doc/pxe-filter.md). The default is "
        "ironic-inspector's, iptables.",
    ),
    cfg.IntOpt(
        "sync_period",
        default=15,
        min=0,
        help="Seconds between repair syncs of the PXE filter, which list "
        "Ironic's ports (0: only at start). Starts, aborts and finishes reach "
        "the filter within about a second without waiting for it. Also how "
        "long the database or Ironic may be away before the filter fails "
        "closed. The noop driver keeps no filter: setting it logs a warning.",
    ),
    cfg.BoolOpt(
        "deny_unknown_macs",
        default=False,
        help="Never let MACs Ironic does not know boot the ramdisk, even "
        "while an introspection runs. Refused together with "
        "[processing]node_not_found_hook (discovery needs unknown MACs).",
    ),
]

DNSMASQ_OPTS: list[cfg.Opt] = [
    cfg.StrOpt(
        "dhcp_hostsdir",
        default="/var/lib/ironic-inspector/dhcp-hostsdir",
        help="dnsmasq's --dhcp-hostsdir: the filter writes one file per MAC "
        "there. It must exist, be writable by the service and be used by "
        "this filter only.",
    ),
    cfg.StrOpt(
        "dhcp_hostsfile",
        default="",
        help="Ours: write every entry to this one file (dnsmasq's "
        "--dhcp-hostsfile) instead of one file per MAC in dhcp_hostsdir, and "
        "SIGHUP dnsmasq (dnsmasq_pid_file) after each change. dnsmasq re-reads "
        "50,000 lines in 0.03 s, 50,000 files in 17 s: use it for large fleets.",
    ),
    cfg.StrOpt(
        "dnsmasq_pid_file",
        default="",
        help="Ours: dnsmasq's pid-file. With dhcp_hostsfile, where the SIGHUP "
        "after each change goes; with dhcp_hostsdir, lets the filter remove "
        "entries of deleted ports and SIGHUP dnsmasq to forget them.",
    ),
    cfg.BoolOpt(
        "purge_dhcp_hostsdir",
        default=True,
        help="Empty dhcp_hostsdir at start, before the first sync.",
    ),
    cfg.StrOpt(
        "dnsmasq_start_command",
        default="",
        help="Shell command run after the first complete sync (e.g. "
        "'systemctl start dnsmasq-inspector'), so dnsmasq never answers "
        "before the filter is in place. Empty: dnsmasq is managed elsewhere.",
    ),
    cfg.StrOpt(
        "dnsmasq_stop_command",
        default="",
        help="Shell command run when the service stops, if it started dnsmasq.",
    ),
]


IPTABLES_OPTS: list[cfg.Opt] = [
    cfg.StrOpt(
        "dnsmasq_interface",
        default="br-ctlplane",
        help="Interface the inspection DHCP server listens on: DHCP requests "
        "arriving there pass the filter's chain.",
    ),
    cfg.StrOpt(
        "firewall_chain",
        default="ironic-inspector",
        help="iptables chain the filter owns (created, rewritten as a whole).",
    ),
    cfg.StrOpt(
        "ip_version",
        default="4",
        choices=[
            ("4", "DHCPv4, iptables, port 67"),
            ("6", "DHCPv6, ip6tables, port 547"),
        ],
        help="IP version of the DHCP server's traffic.",
    ),
    cfg.ListOpt(
        "ethoib_interfaces",
        default=[],
        help="InfiniBand: not supported; setting it is refused at start.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
    conf.register_opts(DNSMASQ_OPTS, group=DNSMASQ_GROUP)
    conf.register_opts(IPTABLES_OPTS, group=IPTABLES_GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS


def list_dnsmasq_opts() -> list[cfg.Opt]:
    return DNSMASQ_OPTS


def list_iptables_opts() -> list[cfg.Opt]:
    return IPTABLES_OPTS


AVAILABLE = ("noop", "dnsmasq", "iptables")


def check_driver(conf: cfg.ConfigOpts, split: bool = False) -> None:
    """Refuse a driver this release cannot run, in the processes that
    would run it (the standalone process, the agents, and conductors, which
    share their file; not the API). ``split`` is for messages only."""
    driver = conf.pxe_filter.driver
    if conf.pxe_filter.deny_unknown_macs and conf.processing.node_not_found_hook:
        raise exceptions.ConfigError(
            f"Invalid configuration: [{GROUP}]deny_unknown_macs = True and "
            "[processing]node_not_found_hook are set: discovery needs unknown "
            "MACs to boot; remove one of them"
        )
    if driver == "iptables" and conf.iptables.ethoib_interfaces:
        raise exceptions.ConfigError(
            f"Invalid configuration: [{IPTABLES_GROUP}]ethoib_interfaces is set: "
            "InfiniBand PXE filtering is not supported; remove it, or use "
            f"[{GROUP}]driver = dnsmasq"
        )
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
    if conf.pxe_filter.driver != "noop":
        return []
    where = conf.get_location("sync_period", GROUP)
    if where is not None and where.location != cfg.Locations.opt_default:
        return [
            f"[{GROUP}]sync_period ({where.detail}) has no effect: the "
            f"{conf.pxe_filter.driver} PXE filter driver keeps no filter to "
            "synchronise"
        ]
    return []
