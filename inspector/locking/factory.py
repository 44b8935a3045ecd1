"""Chooses the lock backend at start-up from the standalone flag."""

from oslo_config import cfg

from inspector import exceptions
from inspector.locking.base import LockProvider
from inspector.locking.semaphore import SemaphoreLockProvider


def from_conf(conf: cfg.ConfigOpts) -> LockProvider:
    if conf.standalone:
        return SemaphoreLockProvider()
    raise exceptions.ConfigError(
        "Invalid configuration: distributed locking (standalone = False) is "
        "not available in this release"
    )
