"""Registers every option group on a ConfigOpts and lists them for tools."""

import logging
import re
from collections.abc import Callable

from oslo_config import cfg

from inspector import exceptions
from inspector.conf import (
    accelerators,
    capabilities,
    coordination,
    cors,
    database,
    default,
    discovery,
    extra_hardware,
    fleet_page,
    healthcheck,
    history,
    inventory,
    ironic,
    ironic_follow,
    ironic_push,
    json_rpc,
    libraries,
    mdns,
    metrics,
    oslo_middleware,
    pci_devices,
    port_physnet,
    processing,
    pxe_filter,
    redfish,
    rules,
    ssl,
    upstream,
)

LOG = logging.getLogger(__name__)

_Register = Callable[[cfg.ConfigOpts], None]
_Lister = Callable[[], list[cfg.Opt]]

_GROUPS: list[tuple[str | None, _Register, _Lister]] = [
    (None, default.register_opts, default.list_opts),
    (database.GROUP, database.register_opts, database.list_opts),
    (coordination.GROUP, coordination.register_opts, coordination.list_opts),
    (ironic.GROUP, ironic.register_opts, ironic.list_opts),
    (json_rpc.GROUP, json_rpc.register_opts, json_rpc.list_opts),
    (processing.GROUP, processing.register_opts, processing.list_opts),
    (pxe_filter.GROUP, pxe_filter.register_opts, pxe_filter.list_opts),
    (pxe_filter.DNSMASQ_GROUP, lambda _conf: None, pxe_filter.list_dnsmasq_opts),
    (pxe_filter.IPTABLES_GROUP, lambda _conf: None, pxe_filter.list_iptables_opts),
    (pci_devices.GROUP, pci_devices.register_opts, pci_devices.list_opts),
    (discovery.GROUP, discovery.register_opts, discovery.list_opts),
    (extra_hardware.GROUP, extra_hardware.register_opts, extra_hardware.list_opts),
    (port_physnet.GROUP, port_physnet.register_opts, port_physnet.list_opts),
    (accelerators.GROUP, accelerators.register_opts, accelerators.list_opts),
    (capabilities.GROUP, capabilities.register_opts, capabilities.list_opts),
    (healthcheck.GROUP, healthcheck.register_opts, healthcheck.list_opts),
    (metrics.GROUP, metrics.register_opts, metrics.list_opts),
    (cors.GROUP, cors.register_opts, cors.list_opts),
    (oslo_middleware.GROUP, oslo_middleware.register_opts, oslo_middleware.list_opts),
    (ssl.GROUP, ssl.register_opts, ssl.list_opts),
    (mdns.GROUP, mdns.register_opts, mdns.list_opts),
    (history.GROUP, history.register_opts, history.list_opts),
    (inventory.GROUP, inventory.register_opts, inventory.list_opts),
    (fleet_page.GROUP, fleet_page.register_opts, fleet_page.list_opts),
    (rules.GROUP, rules.register_opts, rules.list_opts),
    (redfish.GROUP, redfish.register_opts, redfish.list_opts),
    (ironic_follow.GROUP, ironic_follow.register_opts, ironic_follow.list_opts),
    (ironic_push.GROUP, ironic_push.register_opts, ironic_push.list_opts),
]


def register_all(conf: cfg.ConfigOpts) -> None:
    """Register every option group of the service on ``conf``."""
    for _group, register, _list in _GROUPS:
        register(conf)


def list_opts() -> list[tuple[str, list[cfg.Opt]]]:
    """Entry point for oslo-config-generator."""
    result = []
    for group, _register, list_fn in _GROUPS:
        result.append((group or "DEFAULT", list_fn()))
    return result


_LOCATION = re.compile(r"from LocationInfo\(location=<[^>]*>, detail='([^']*)'\)")


def readable(exc: Exception) -> str:
    """oslo.config's message with the file it names instead of the repr of
    its ``LocationInfo`` ("Value for option x from LocationInfo(...) is not
    valid" becomes "Value for option x in /etc/... is not valid")."""
    return _LOCATION.sub(lambda m: f"in {m.group(1)}", str(exc))


def validate(conf: cfg.ConfigOpts, cluster: bool = True) -> None:
    """:func:`judge` the configuration and log its warnings once."""
    for message in judge(conf, cluster):
        LOG.warning("%s", message)


def judge(conf: cfg.ConfigOpts, cluster: bool = True) -> list[str]:
    """Read every registered option once so bad values fail at start-up,
    judge every option the files set (:func:`upstream.check`) and check
    what the libraries' options turn on (:func:`libraries.check`; not the
    broker's and coordination backend's when ``cluster`` is False).
    Returns the warnings: options set that change nothing here.

    oslo.config checks ``choices``, ``min`` and ``max`` only when a value is
    read; reading them all here turns a typo into a clear start-up error
    instead of a failure in the middle of an introspection.
    """
    for group_name, _register, list_fn in _GROUPS:
        for opt in list_fn():
            try:
                if group_name is None:
                    getattr(conf, opt.dest)
                else:
                    getattr(getattr(conf, group_name), opt.dest)
            except (cfg.ConfigFileValueError, ValueError) as exc:
                where = f"[{group_name or 'DEFAULT'}]{opt.name}"
                raise exceptions.ConfigError(
                    f"Invalid configuration: {where}: {readable(exc)}"
                ) from exc
    refused = processing.refusals(conf)
    if refused:
        raise exceptions.ConfigError("Invalid configuration: " + "\n".join(refused))
    own = [group for group, _register, _list in _GROUPS if group]
    warnings = upstream.check(conf, own) + pxe_filter.without_effect(conf)
    return warnings + libraries.check(conf, cluster)
