"""Options of the [cors] group: oslo.middleware's CORS, as ironic-inspector.

Browsers on the origins of ``allowed_origin`` may call the API (Horizon's
or a custom dashboard's JavaScript). Unset, no CORS header is ever sent and
the middleware is not even installed.
"""

from oslo_config import cfg
from oslo_middleware import cors

GROUP = "cors"

# ironic-inspector's defaults: its version headers may cross origins
cors.set_defaults(
    allow_headers=[
        "X-Auth-Token",
        "X-OpenStack-Ironic-Inspector-API-Minimum-Version",
        "X-OpenStack-Ironic-Inspector-API-Maximum-Version",
        "X-OpenStack-Ironic-Inspector-API-Version",
    ],
    allow_methods=["GET", "POST", "PUT", "HEAD", "PATCH", "DELETE", "OPTIONS"],
)


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(cors.CORS_OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return list(cors.CORS_OPTS)
