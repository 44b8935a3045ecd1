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
    cfg.FloatOpt(
        "final_states_interval",
        default=60.0,
        min=0,
        help="Seconds a count of the finished and failed introspections "
        "(the ironic_inspector_introspections gauge's finished and error "
        "states) is reused between scrapes. Those grow with the history "
        "(about 25 ms to count 200,000 records); the states of work in "
        "progress are counted at every scrape and cost as much as the work "
        "in progress. 0 counts everything at every scrape.",
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
