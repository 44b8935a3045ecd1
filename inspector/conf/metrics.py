"""Options of the [metrics] group (Prometheus)."""

from oslo_config import cfg

GROUP = "metrics"

OPTS = [
    cfg.BoolOpt(
        "enabled",
        default=True,
        help="Answer GET /metrics on the API in the Prometheus text format, "
        "without authentication. Restrict it at the web server if the "
        "counts must stay private.",
    ),
    cfg.PortOpt(
        "conductor_port",
        default=0,
        help="Port on which each conductor (ironic-inspector-conductor) "
        "serves its own /metrics: processing time, Ironic calls, lock waits "
        "and orphans it took over. 0 serves none. Several conductors on one "
        "host need a port each. The standalone process exposes everything "
        "on the API's /metrics and ignores this.",
    ),
    cfg.HostAddressOpt(
        "conductor_address",
        default="127.0.0.1",
        help="Address the conductor's metrics port listens on.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
