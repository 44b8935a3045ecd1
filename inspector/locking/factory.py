"""Chooses the lock backend at start-up from the standalone flag."""

from typing import Any

from oslo_config import cfg

from inspector import exceptions
from inspector.locking.base import LockProvider
from inspector.locking.semaphore import SemaphoreLockProvider


def from_conf(conf: cfg.ConfigOpts, coordinator: Any = None) -> LockProvider:
    """In-process locks when standalone, else tooz locks on ``coordinator``."""
    if conf.standalone:
        return SemaphoreLockProvider()
    if coordinator is None:
        raise exceptions.ConfigError(
            "Invalid configuration: split mode (standalone = False) needs a "
            "coordination backend for node locks"
        )
    from inspector.locking.tooz_locks import ToozLockProvider

    return ToozLockProvider(coordinator)
