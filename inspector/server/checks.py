"""Every shape's start-up checks, in one place, run before anything is
built or connects (:mod:`inspector.server.wiring` builds after them).

Each function lists, in order, what one shape refuses: the options read
and judged once (:func:`inspector.conf.opts.validate`), the files the
options name (built-in rules, the expected cabling, the ramdisk logs'
directory, the PXE filter's files), and the options that cannot go
together in that shape. Each refusal is a
:class:`~inspector.exceptions.ConfigError` naming the option to change;
the checks of one kind of thing stay with the module that knows it.
"""

import logging

from oslo_config import cfg

from inspector import exceptions
from inspector.conf import ironic_follow, opts, pxe_filter, shape

LOG = logging.getLogger(__name__)

FILTERING = ("dnsmasq", "iptables")
"""The PXE filter drivers that filter (``noop`` does nothing)."""


def standalone(conf: cfg.ConfigOpts) -> None:
    """``ironic-inspector``: the API and a conductor in one process."""
    ironic_follow.check(conf)  # first: it registers the listener's options
    opts.validate(conf)
    _built_in_rules(conf)  # an invalid [rules]built_in_rules refuses the start
    pxe_filter.check_driver(conf)
    if conf.enable_mdns and conf.listen_unix_socket:
        raise exceptions.ConfigError(
            "Invalid configuration: [DEFAULT]enable_mdns needs a TCP listener "
            "to publish, and listen_unix_socket is set: remove enable_mdns and "
            "give the ramdisks the front end's URL "
            "(ipa-inspection-callback-url)"
        )
    _ramdisk_logs(conf)
    _expected_cabling(conf)
    if conf.pxe_filter.driver in FILTERING:
        _pxe_backend(conf)


def conductor(conf: cfg.ConfigOpts) -> None:
    """``ironic-inspector-conductor``: one conductor of the split shape."""
    ironic_follow.check(conf)  # first: it registers the listener's options
    opts.validate(conf)
    _built_in_rules(conf)
    if conf.enable_mdns:
        # the API runs elsewhere, at a URL a conductor does not know, and one
        # responder per network owns the name: publishing is standalone's
        raise exceptions.ConfigError(
            "Invalid configuration: [DEFAULT]enable_mdns is available in the "
            "standalone process only: remove it and give the ramdisks "
            "ipa-inspection-callback-url=<the API's URL> on their command line"
        )
    pxe_filter.check_driver(conf, split=True)
    if conf.pxe_filter.driver != "noop":
        LOG.info(
            "[pxe_filter]driver = %s: conductors do not filter; "
            "ironic-inspector-pxe-filter runs next to each DHCP server",
            conf.pxe_filter.driver,
        )
    _ramdisk_logs(conf)
    shape.check_split(conf)


def api(conf: cfg.ConfigOpts) -> None:
    """The split shape's API (``ironic-inspector-api-wsgi``)."""
    if conf.standalone:
        raise exceptions.ConfigError(
            "[DEFAULT]standalone is True: run ironic-inspector (API and "
            "conductor in one process) instead, or set standalone = False"
        )
    opts.validate(conf)
    _built_in_rules(conf)  # listed by GET /v1/rules
    shape.check_split(conf)
    _expected_cabling(conf)


def pxe_agent(conf: cfg.ConfigOpts) -> None:
    """``ironic-inspector-pxe-filter``: one DHCP host's filter."""
    opts.validate(conf, cluster=False)
    pxe_filter.check_driver(conf)
    if conf.pxe_filter.driver not in FILTERING:
        raise exceptions.ConfigError(
            "Invalid configuration: [pxe_filter]driver = noop: the PXE filter "
            "agent has nothing to do; set driver = dnsmasq (or iptables) for "
            "the DHCP server on this host"
        )
    # an unusable hostsdir or interface stops the start before anything connects
    _pxe_backend(conf)


def _built_in_rules(conf: cfg.ConfigOpts) -> None:
    """Load ``[rules]built_in_rules``: an invalid file refuses the start."""
    from inspector.rules import builtin  # when checked, not when imported

    builtin.install(conf)


def _ramdisk_logs(conf: cfg.ConfigOpts) -> None:
    """A process that writes the ramdisk's logs needs their directory."""
    from inspector.db import ramdisk_logs

    ramdisk_logs.check_conf(conf)


def _expected_cabling(conf: cfg.ConfigOpts) -> None:
    """A process that serves the fleet view reads the expected cabling."""
    from inspector.fleet import expected

    expected.configured(conf.inventory.expected_cabling)


def _pxe_backend(conf: cfg.ConfigOpts) -> None:
    """The filter's files and interfaces, before anything connects."""
    from inspector.pxe_filter.service import backend_of

    backend_of(conf).check()
