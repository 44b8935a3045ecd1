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
    cfg.FloatOpt(
        "claim_timeout",
        default=30.0,
        min=1,
        help="Seconds a step of an introspection (starting, processing, "
        "reapplying, aborting) may wait for a conductor to pick it up before "
        "it counts as lost (its cast went to a conductor that died) and the "
        "leader resumes it. Also in standalone mode.",
    ),
    cfg.FloatOpt(
        "leader_lease",
        default=10.0,
        min=3,
        help="Seconds the leader's hold on the cluster-wide periodic work "
        "(orphan sweep, timeouts) lasts without renewal; it renews every "
        "third of it. When the leader dies another conductor takes over "
        "within about 1.3 x this.",
    ),
    cfg.FloatOpt(
        "sweep_interval",
        default=5.0,
        min=0.5,
        help="Seconds between two looks for lost work: by the leader for "
        "steps whose conductor left the group (add the backend's "
        "membership_timeout for the time to notice a dead conductor), by "
        "every conductor for its own steps from before a restart.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
