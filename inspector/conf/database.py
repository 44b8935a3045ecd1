"""Options of the [database] group."""

from oslo_config import cfg

GROUP = "database"

POOL_SIZE = 10
"""Default of max_pool_size: an API process under Apache runs 8 threads,
a conductor takes casts with 8 and works on nodes with more (upstream and
oslo.db: 5)."""

OPTS = [
    cfg.StrOpt(
        "connection",
        default="sqlite:////var/lib/ironic-inspector/inspector.sqlite",
        secret=True,
        help="SQLAlchemy URL of the database. SQLite is for the standalone "
        "process only; split mode needs PostgreSQL "
        "(postgresql+psycopg2://...) or MariaDB (mysql+pymysql://...).",
    ),
    cfg.IntOpt(
        "max_pool_size",
        default=POOL_SIZE,
        min=1,
        help="Connections kept open to a server database (per process). "
        f"ironic-inspector keeps 5; {POOL_SIZE} here, because a process "
        "busier than its pool opens and closes a connection (a server "
        "process, an authentication) for nearly every statement beyond it: "
        "five per process made that a third of split mode's CPU under a "
        "burst of introspections. Each process keeps only as many as it "
        "needed at once; count them against the server's max_connections.",
    ),
    cfg.IntOpt(
        "max_overflow",
        default=50,
        min=0,
        help="Connections opened beyond max_pool_size under load, closed "
        "when returned.",
    ),
    cfg.IntOpt(
        "pool_timeout",
        default=30,
        min=1,
        help="Seconds to wait for a free pooled connection (ironic-inspector "
        "leaves it unset, which is SQLAlchemy's 30).",
    ),
    cfg.IntOpt(
        "connection_recycle_time",
        default=3600,
        min=1,
        help="Seconds after which a pooled connection to a server database "
        "is replaced when next used, as in ironic-inspector (oslo.db); keep "
        "it below the server's or a proxy's idle timeout.",
    ),
    cfg.IntOpt(
        "max_retries",
        default=10,
        min=-1,
        help="Attempts to reach the database at start-up of the standalone "
        "process and conductors before giving up; -1 retries forever (for a "
        "database that starts after the service). The API process answers "
        "503 and retries on the next request instead.",
    ),
    cfg.IntOpt(
        "retry_interval",
        default=10,
        min=0,
        help="Seconds between those attempts.",
    ),
    cfg.IntOpt(
        "sqlite_busy_timeout",
        default=10000,
        min=0,
        help="Milliseconds SQLite waits on a locked database before failing. "
        "Within one process, writers take turns on a lock instead of "
        "retrying in SQLite, and wait for their turn at most this long.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
