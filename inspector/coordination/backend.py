"""The tooz coordinator behind split mode, and its errors at our boundary."""

import contextlib
import logging
import urllib.parse
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from oslo_config import cfg

from inspector import exceptions

if TYPE_CHECKING:
    from tooz.coordination import CoordinationDriver
    from tooz.locking import Lock

LOG = logging.getLogger(__name__)

GROUP_ID = b"ironic_inspector.service_group"
"""The tooz group every conductor joins."""


def _failure_types() -> tuple[type[BaseException], ...]:
    import requests
    import tooz

    types: list[type[BaseException]] = [tooz.ToozError, requests.RequestException]
    try:
        from etcd3gw import exceptions as etcd_exceptions

        # raised instead of a tooz error when etcd is down at start
        types.append(etcd_exceptions.Etcd3Exception)
    except ImportError:  # etcd3gw is optional for other backends
        pass
    types.append(OSError)
    return tuple(types)


@contextlib.contextmanager
def translated(action: str) -> Iterator[None]:
    """Turn any backend failure into a 503-class :class:`ServiceUnavailable`."""
    try:
        yield
    except exceptions.InspectorError:
        raise
    except _failure_types() as exc:
        detail = exceptions.first_line(exc, "")
        raise exceptions.ServiceUnavailable(
            reason=f"coordination backend failed to {action}: "
            f"{type(exc).__name__}{': ' + detail if detail else ' (no answer)'}"
        ) from exc


def describe(url: str) -> str:
    """``url`` without credentials or query, safe for logs and messages."""
    parsed = urllib.parse.urlsplit(url)
    host = parsed.hostname or ""
    if parsed.port:
        host = f"{host}:{parsed.port}"
    return f"{parsed.scheme}://{host}{parsed.path}"


def start_coordinator(conf: cfg.ConfigOpts, member_id: str) -> "CoordinationDriver":
    """A started tooz coordinator for ``member_id``; heartbeats are ours.

    :raises ServiceUnavailable: the backend cannot be reached.
    """
    from tooz import coordination

    url = conf.coordination.backend_url
    with translated(f"connect to {describe(url)}"):
        coordinator = coordination.get_coordinator(url, member_id.encode())
        driver, client = direct_access(coordinator)
        if driver == "etcd3gw" and client is not None:
            from inspector.coordination import etcd_session

            etcd_session.install(client)
        coordinator.start(start_heart=False)
    LOG.debug("Connected to coordination backend %s as %s", describe(url), member_id)
    return coordinator


_DIRECT_ACCESS = {
    "etcd3gw": "client",
    "redis": "_client",
    "memcached": "client",
    "file": "_dir",
}
"""Where each tooz driver keeps its way to the backend (not tooz's public API)."""

_HELD_LOCKS = "_acquired_locks"
"""Where tooz's etcd3gw and redis drivers keep the locks their heartbeat
renews (not tooz's public API)."""

TOOZ_FIELDS: dict[str, tuple[str, ...]] = {
    "etcd3gw": (_DIRECT_ACCESS["etcd3gw"], _HELD_LOCKS),
    "redis": (_DIRECT_ACCESS["redis"], _HELD_LOCKS),
    "memcached": (_DIRECT_ACCESS["memcached"],),
    "file": (_DIRECT_ACCESS["file"],),
}
"""Every field of a tooz driver this module reads, by driver: tooz has no
public accessor for them. ``tests/unit/coordination/test_tooz_internals.py``
checks that the installed tooz still has each, within the version range
setup.cfg allows."""


def direct_access(coordinator: "CoordinationDriver") -> tuple[str, Any]:
    """The driver name of ``coordinator`` and its way to the backend itself.

    That is the etcd3gw client (its kept-alive session, the node locks on
    one lease), the redis or pymemcache client or the file driver's
    directory (the conductor states an earlier release kept there:
    :mod:`inspector.coordination.legacy_states`); None for a driver not
    listed. tooz has no public accessor, so its private fields are read here
    and nowhere else (:data:`TOOZ_FIELDS`).
    """
    driver = type(coordinator).__module__.rsplit(".", 1)[-1]
    field = _DIRECT_ACCESS.get(driver)
    return driver, getattr(coordinator, field, None) if field else None


def stop_refreshing(coordinator: "CoordinationDriver", lock: "Lock") -> None:
    """Stop ``coordinator``'s heartbeat renewing ``lock``'s lease, so that a
    lock whose release failed runs out by itself.

    tooz has no public way: its etcd3gw and redis drivers renew the locks
    in a private set; other drivers are left alone.
    """
    held = getattr(coordinator, _HELD_LOCKS, None)
    if isinstance(held, set):
        held.discard(lock)
