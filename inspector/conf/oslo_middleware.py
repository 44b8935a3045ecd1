"""Options of the [oslo_middleware] group: headers set by a proxy in front.

Behind a TLS-terminating load balancer the API sees plain HTTP from the
proxy; with ``enable_proxy_headers_parsing`` the links in its answers use
the scheme, host and prefix of ``X-Forwarded-Proto``/``-Host``/``-Prefix``
(and ``Forwarded``). Only enable it when every request comes through such a
proxy: a client reaching the API directly could otherwise choose the links.
"""

from oslo_config import cfg
from oslo_middleware import http_proxy_to_wsgi

GROUP = "oslo_middleware"


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(http_proxy_to_wsgi.OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return list(http_proxy_to_wsgi.OPTS)
