"""Options of the [coordination] group (split mode)."""

from oslo_config import cfg

GROUP = "coordination"

OPTS = [
    cfg.StrOpt(
        "backend_url",
        default="memcached://localhost:11211",
        secret=True,
        help="tooz URL of the coordination backend that holds the conductor "
        "group and the node locks in split mode (standalone = False). "
        "Production: etcd, e.g. etcd3+http://etcd.example.com:2379 "
        "(query options membership_timeout and lock_timeout, in seconds, "
        "default 30; timeout bounds each request to etcd). redis://, "
        "memcached:// and zookeeper:// work too; file:// only on one host. "
        "Unused in standalone mode.",
    ),
    cfg.FloatOpt(
        "member_cache_seconds",
        default=2.0,
        min=0,
        help="How long the API reuses the list of live conductors before "
        "reading it again from the backend. A failed cast refreshes it at "
        "once.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
