"""Options of the [history] group: how long hardware records are kept."""

from oslo_config import cfg

GROUP = "history"

OPTS: list[cfg.Opt] = [
    cfg.IntOpt(
        "keep_runs",
        mutable=True,
        default=20,
        min=1,
        help="How many finished runs (introspections and reapplies, with "
        "their hardware record and changes) are kept per node; older ones "
        "are pruned by the leader conductor. A record is a few KiB, so "
        "10,000 nodes at 20 runs take some hundreds of MiB. The run the "
        "fleet view shows (the node's latest with a record) is never pruned.",
    ),
    cfg.IntOpt(
        "max_age_days",
        mutable=True,
        default=0,
        min=0,
        help="Runs finished more than this many days ago are pruned too "
        "(0: no age limit, only keep_runs). Off by default: a node "
        "introspected rarely would otherwise lose the runs its changes are "
        "read against; keep_runs already bounds the table.",
    ),
    cfg.IntOpt(
        "prune_interval",
        mutable=True,
        default=600,
        min=0,
        help="Seconds between two pruning passes of the leader conductor "
        "(0: never prune).",
    ),
    cfg.IntOpt(
        "prune_batch",
        mutable=True,
        default=1000,
        min=1,
        help="The most runs one pruning pass deletes (and about the most it "
        "reads), so a pass is short whatever the backlog: a backlog takes "
        "several passes.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
