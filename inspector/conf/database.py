"""Options of the [database] group."""

from oslo_config import cfg

GROUP = "database"

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
        default=10,
        min=1,
        help="Connections kept open to a server database.",
    ),
    cfg.IntOpt(
        "max_overflow",
        default=20,
        min=0,
        help="Connections allowed beyond max_pool_size under load.",
    ),
    cfg.IntOpt(
        "pool_timeout",
        default=30,
        min=1,
        help="Seconds to wait for a free pooled connection.",
    ),
    cfg.IntOpt(
        "sqlite_busy_timeout",
        default=10000,
        min=0,
        help="Milliseconds SQLite waits on a locked database before failing.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
