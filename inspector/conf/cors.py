"""Options of the [cors] group: oslo.middleware's CORS, as ironic-inspector.

Browsers on the origins of ``allowed_origin`` may call the API (Horizon's
or a custom dashboard's JavaScript). Unset, no CORS header is ever sent and
the middleware is not even installed.
"""

from oslo_config import cfg
from oslo_middleware import cors

GROUP = "cors"

VERSION_HEADERS = [
    "X-OpenStack-Ironic-Inspector-API-Minimum-Version",
    "X-OpenStack-Ironic-Inspector-API-Maximum-Version",
    "X-OpenStack-Ironic-Inspector-API-Version",
]


def _set_defaults() -> None:
    """ironic-inspector's defaults: its version headers may cross origins
    both ways, and a browser may read the request id of every answer (to
    quote it when it reports a failure). oslo.middleware keeps defaults on
    its module's options, so this is done when the options are registered
    or listed, not at import."""
    cors.set_defaults(
        allow_headers=["X-Auth-Token", *VERSION_HEADERS],
        expose_headers=[*VERSION_HEADERS, "X-OpenStack-Request-Id"],
        allow_methods=["GET", "POST", "PUT", "HEAD", "PATCH", "DELETE", "OPTIONS"],
    )


def register_opts(conf: cfg.ConfigOpts) -> None:
    _set_defaults()
    conf.register_opts(cors.CORS_OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    _set_defaults()
    return list(cors.CORS_OPTS)
