"""Chooses the lock backend at start-up from the standalone flag."""

from typing import TYPE_CHECKING

from oslo_config import cfg

from inspector import exceptions
from inspector.locking.base import LockProvider
from inspector.locking.semaphore import SemaphoreLockProvider

if TYPE_CHECKING:
    from tooz.coordination import CoordinationDriver


def from_conf(
    conf: cfg.ConfigOpts,
    coordinator: "CoordinationDriver | None" = None,
    holder: str | None = None,
) -> LockProvider:
    """In-process locks when standalone; in split mode, etcd locks on one
    lease per process with etcd, else tooz locks on ``coordinator``.
    ``holder`` (a conductor's ``host/run``) names the holder in its etcd
    locks."""
    if conf.standalone:
        return SemaphoreLockProvider()
    if coordinator is None:
        raise exceptions.ConfigError(
            "Invalid configuration: split mode (standalone = False) needs a "
            "coordination backend for node locks"
        )
    return for_coordinator(coordinator, holder)


def for_coordinator(
    coordinator: "CoordinationDriver", holder: str | None = None
) -> LockProvider:
    """Split mode's locks: on etcd, ours on one lease per process; on the
    other tooz backends, tooz's."""
    from inspector.coordination.backend import direct_access

    driver, client = direct_access(coordinator)
    if driver == "etcd3gw" and client is not None:
        from inspector.locking.etcd_locks import EtcdLockProvider

        # tooz's lock_timeout (backend_url's ?timeout=, 30 s by default)
        return EtcdLockProvider(
            client, getattr(coordinator, "lock_timeout", 30), holder
        )
    from inspector.locking.tooz_locks import ToozLockProvider

    return ToozLockProvider(coordinator)
