"""Where the API reaches a conductor: the URL each conductor publishes in
its membership of the conductor group (under
:data:`inspector.coordination.members.ENDPOINT`), so the API needs no DNS
and conductors can share a host on different ports."""

from oslo_config import cfg

from inspector.net.address import is_wildcard, url_host


def advertised(conf: cfg.ConfigOpts) -> str:
    """This conductor's URL: ``[json_rpc]advertise_host``, else ``host_ip``
    when it is one address, else ``[DEFAULT]host``."""
    opts = conf.json_rpc
    host = opts.advertise_host or (
        opts.host_ip if not is_wildcard(opts.host_ip) else conf.host
    )
    scheme = "https" if opts.use_ssl else "http"
    return f"{scheme}://{url_host(host)}:{opts.port}/"
