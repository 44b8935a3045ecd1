"""[database] pool options reach SQLAlchemy's pool as ironic-inspector's did
(its pool size default aside)."""

from oslo_config import cfg

from inspector import bootstrap
from inspector.db import engine


def _database(**options: object) -> engine.Database:
    conf = bootstrap.parse_config([], cfg.ConfigOpts())
    options.setdefault("connection", "postgresql+psycopg2://u:p@127.0.0.1:1/x")
    for name, value in options.items():
        conf.set_override(name, value, group="database")
    return engine.from_conf(conf)  # no connection is opened yet


def test_defaults() -> None:
    pool = _database().engine.pool
    assert pool.size() == 10  # type: ignore[attr-defined]  # upstream: 5
    assert pool._max_overflow == 50  # type: ignore[attr-defined]  # noqa: SLF001
    assert pool._recycle == 3600  # noqa: SLF001
    assert pool._timeout == 30  # type: ignore[attr-defined]  # noqa: SLF001


def test_recycle_time_and_sizes_are_honoured() -> None:
    pool = _database(connection_recycle_time=120, max_pool_size=7).engine.pool
    assert pool._recycle == 120  # noqa: SLF001
    assert pool.size() == 7  # type: ignore[attr-defined]
