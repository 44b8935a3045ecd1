"""Redfish sessions kept per BMC, and the bound of requests per BMC host.

One :class:`Sessions` per conductor process. A session (sushy's root
object, logged in once) is kept per BMC address and user and reused by
every later introspection of a system behind it; a BMC that refuses it
(an expired session) gets one new login. Inspections of one host hold one
of ``[redfish]max_per_host`` slots while they ask it: a slow or broken BMC
holds up only the inspections of that host.
"""

import collections
import contextlib
import hashlib
import logging
import threading
from collections.abc import Iterator
from typing import Any

import sushy
from oslo_config import cfg

from inspector import exceptions
from inspector.redfish import connector
from inspector.redfish.credentials import BmcCredentials

LOG = logging.getLogger(__name__)


def _key(creds: BmcCredentials) -> tuple[str, str]:
    return creds.address.lower(), creds.username or ""


def _secret(creds: BmcCredentials) -> str:
    """What tells a changed password or TLS setting (never kept in clear)."""
    text = f"{creds.password}\0{creds.verify}"
    return hashlib.sha256(text.encode()).hexdigest()


class Sessions:
    """Sessions by BMC address and user (least recently used dropped past
    ``[redfish]session_cache_size``) and the slots per BMC host."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self._conf = conf
        self._guard = threading.Lock()
        self._roots: collections.OrderedDict[tuple[str, str], tuple[str, Any]] = (
            collections.OrderedDict()
        )
        self._hosts: dict[str, threading.BoundedSemaphore] = {}

    @contextlib.contextmanager
    def slot(self, creds: BmcCredentials) -> Iterator[None]:
        """Hold one of the host's ``[redfish]max_per_host`` slots."""
        with self._guard:
            limit = self._hosts.get(creds.host)
            if limit is None:
                limit = threading.BoundedSemaphore(self._conf.redfish.max_per_host)
                self._hosts[creds.host] = limit
        with limit:
            yield

    def root(self, creds: BmcCredentials) -> Any:
        """The logged-in sushy root of ``creds``' BMC, kept or new.

        :raises BmcError: the BMC could not be reached or refused the login.
        """
        key, secret = _key(creds), _secret(creds)
        with self._guard:
            kept = self._roots.get(key)
            if kept is not None and kept[0] == secret:
                self._roots.move_to_end(key)
                return kept[1]
        root = self._login(creds)
        with self._guard:
            self._roots[key] = (secret, root)
            self._roots.move_to_end(key)
            while len(self._roots) > self._conf.redfish.session_cache_size:
                self._roots.popitem(last=False)
        return root

    def forget(self, creds: BmcCredentials) -> None:
        """Drop the kept session of ``creds``' BMC (it was refused)."""
        with self._guard:
            self._roots.pop(_key(creds), None)

    def _login(self, creds: BmcCredentials) -> Any:
        conf = self._conf.redfish
        LOG.debug("Opening a Redfish session with %s", creds.describe())
        try:
            return sushy.Sushy(
                creds.address,
                username=creds.username,
                password=creds.password,
                verify=creds.verify,
                connector=connector.make(
                    creds.address,
                    creds.verify,
                    retries=conf.retries,
                    retry_delay=conf.retry_delay,
                    timeout=conf.timeout,
                ),
            )
        except Exception as exc:
            raise bmc_error(creds, exc) from exc


def bmc_error(creds: BmcCredentials, exc: BaseException) -> exceptions.BmcError:
    """``exc`` (sushy's, requests', a decoding error) as the one error an
    introspection ends with, naming the BMC and the cause."""
    if isinstance(exc, exceptions.BmcError):
        return exc
    if isinstance(exc, sushy.exceptions.AccessError):
        reason = "the BMC refused the credentials (HTTP 401/403)"
    elif isinstance(exc, sushy.exceptions.ResourceNotFoundError):
        reason = f"not found: {exceptions.first_line(exc)}"
    elif isinstance(exc, sushy.exceptions.ConnectionError):
        reason = f"could not be reached: {exceptions.first_line(exc)}"
    elif isinstance(exc, sushy.exceptions.SushyError):
        reason = exceptions.first_line(exc)
    elif isinstance(exc, ValueError):  # JSON decoding: HTML or garbage
        reason = f"answered something that is not Redfish JSON ({exc})"
    else:
        reason = f"{type(exc).__name__}: {exceptions.first_line(exc)}"
    return exceptions.BmcError(bmc=creds.describe(), reason=reason)
