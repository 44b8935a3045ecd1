"""Where the API reaches a conductor: the URL each conductor publishes in
its membership of the conductor group (tooz member capabilities), so the
API needs no DNS and conductors can share a host on different ports."""

import ipaddress
from typing import Any

from oslo_config import cfg

CAPABILITY = "rpc_endpoint"
"""The member capability holding a conductor's JSON-RPC URL."""

WILDCARDS = {"", "::", "0.0.0.0", "[::]"}


def _bracketed(host: str) -> str:
    try:
        if ipaddress.ip_address(host.strip("[]")).version == 6:
            return f"[{host.strip('[]')}]"
    except ValueError:
        pass
    return host


def advertised(conf: cfg.ConfigOpts) -> str:
    """This conductor's URL: ``[json_rpc]advertise_host``, else ``host_ip``
    when it is one address, else ``[DEFAULT]host``."""
    opts = conf.json_rpc
    host = opts.advertise_host or (
        opts.host_ip if opts.host_ip not in WILDCARDS else conf.host
    )
    scheme = "https" if opts.use_ssl else "http"
    return f"{scheme}://{_bracketed(host)}:{opts.port}/"


def of(capabilities: Any) -> str | None:
    """The URL a member published, None when it published none (a conductor
    on the oslo transport, or one from before this transport)."""
    if isinstance(capabilities, dict):
        url = capabilities.get(CAPABILITY)
        if isinstance(url, str) and url:
            return url
    return None
