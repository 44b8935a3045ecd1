"""physnet_cidr_map: a port's physical network from its NIC's address."""

import ipaddress
import logging

from oslo_config import cfg

from inspector import exceptions
from inspector.hooks.base import Data, NodeContext, ProcessingHook

LOG = logging.getLogger(__name__)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_map(entries: list[str]) -> list[tuple[Network, str]]:
    """[(network, physnet)], most specific first.

    :raises ConfigError: naming the entry that is not CIDR:physnet.
    """
    parsed = []
    for entry in entries:
        cidr, sep, physnet = entry.strip().rpartition(":")
        try:
            if not sep or not physnet:
                raise ValueError("expected CIDR:physnet")
            parsed.append((ipaddress.ip_network(cidr, strict=False), physnet))
        except ValueError as exc:
            raise exceptions.ConfigError(
                f"Invalid configuration: [port_physnet]cidr_map entry {entry!r}: {exc}"
            ) from exc
    return sorted(parsed, key=lambda item: -item[0].prefixlen)


class PhysnetCidrMapHook(ProcessingHook):
    """Reads ``all_interfaces.<nic>.ip``; writes ``physical_network`` of the
    NIC's Ironic port (existing ones patched when it differs, new ones
    created with it) from ``[port_physnet]cidr_map``."""

    dependencies = ("validate_interfaces",)

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        super().__init__(conf)
        self.networks = parse_map(conf.port_physnet.cidr_map)

    def _physnet(self, address: object) -> str | None:
        try:
            ip = ipaddress.ip_address(str(address).split("%")[0])
        except ValueError:
            return None
        for network, physnet in self.networks:
            if ip.version == network.version and ip in network:
                return physnet
        return None

    def before_update(self, data: Data, ctx: NodeContext) -> None:
        interfaces = data.get("all_interfaces") or {}
        for name, iface in interfaces.items():
            physnet = self._physnet(iface.get("ip")) if iface.get("ip") else None
            if physnet is None:
                continue
            ctx.set_port_field(str(iface.get("mac")), "physical_network", physnet)
            LOG.debug("Node %s NIC %s: physical network %s", ctx.uuid, name, physnet)
