"""Node locks in etcd on one lease per process.

tooz's etcd driver grants a lease for every lock it takes (and for every
try at a held one), so a lock cost three requests: the grant, the
transaction and the release's transaction; and each try at a held lock
left one more lease in etcd for its TTL. Here every lock of a process
hangs on the same lease, kept alive by one thread: a lock is one
transaction to take and one to give back. When the process dies, its
lease runs out after the TTL and its locks go with it, as with tooz.

The keys and the rule for taking them are tooz's (see :data:`PREFIX`;
created only when absent), so a process on the tooz
lock and one on this exclude each other during a rolling upgrade.
"""

import base64
import json
import logging
import threading
import uuid as uuidlib
from typing import TYPE_CHECKING, Any

from inspector.locking.base import LockProvider, NodeLock
from inspector.locking.remote import RemoteLock

if TYPE_CHECKING:
    from etcd3gw.client import Etcd3Client

LOG = logging.getLogger(__name__)

PREFIX = b"/tooz/locks"
"""tooz's etcd driver keys a lock as this and its name, with no separator
(``/tooz/locksironic_inspector.<uuid>``); the same keys here."""

RETRY_FIRST_SECONDS = 0.5
"""Pause before the first retry of a lock key's deletion etcd did not
answer (a release, or a take whose answer never came); doubled after each
failed round."""

RELEASE_RETRY_SECONDS = 5.0
"""Longest pause between those retries."""


def _b64(value: bytes) -> str:
    return base64.b64encode(value).decode()


def _lease_gone(exc: Exception) -> bool:
    """Whether etcd refused a write because its lease no longer exists
    (etcd3gw keeps etcd's answer, "requested lease not found", apart)."""
    return "lease not found" in f"{getattr(exc, 'detail_text', '')} {exc}"


class _Lease:
    """The process's lease: granted on first use, refreshed every third of
    its TTL by a thread; a new one is granted when etcd says it expired
    (the process was cut off longer than the TTL)."""

    def __init__(self, client: "Etcd3Client", ttl: int) -> None:
        self._client = client
        self.ttl = max(2, int(ttl))
        self._id: int | None = None
        self.generation = 0
        """Bumped each time the lease is replaced: locks taken under an
        earlier one went with it."""
        self._guard = threading.Lock()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def current(self) -> tuple[int, int]:
        """(lease ID, generation), granting a lease when there is none."""
        with self._guard:
            if self._id is None:
                self._id = int(self._client.lease(self.ttl).id)
                self.generation += 1
                LOG.debug("Node locks hang on etcd lease %x now", self._id)
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._keep_alive, name="lock-lease", daemon=True
                    )
                    self._thread.start()
            return self._id, self.generation

    def lost(self, lease_id: int) -> None:
        """etcd no longer knows ``lease_id``: the next lock gets a new lease."""
        with self._guard:
            if self._id == lease_id:
                self._id = None
                LOG.warning(
                    "The etcd lease of this process's node locks (%x) expired; "
                    "locks held under it are no longer held",
                    lease_id,
                )

    def _keep_alive(self) -> None:
        while not self._stopped.wait(self.ttl / 3):
            with self._guard:
                lease_id = self._id
            if lease_id is None:
                continue
            try:
                result = self._client.post(
                    self._client.get_url("/lease/keepalive"), json={"ID": lease_id}
                )
            except Exception as exc:  # the backend is away: try again later
                LOG.debug("Refreshing lock lease %x failed: %s", lease_id, exc)
                continue
            if int(result.get("result", {}).get("TTL", -1)) <= 0:
                self.lost(lease_id)

    def stop(self) -> None:
        """Stop refreshing and give the lease back (its locks with it)."""
        self._stopped.set()
        with self._guard:
            lease_id, self._id = self._id, None
        if lease_id is None:
            return
        try:
            self._client.post(
                self._client.get_url("/kv/lease/revoke"), json={"ID": lease_id}
            )
        except Exception as exc:  # it runs out by itself within the TTL
            LOG.debug("Revoking lock lease %x failed: %s", lease_id, exc)


class EtcdLock(RemoteLock):
    def __init__(self, provider: "EtcdLockProvider", node_uuid: str) -> None:
        super().__init__(node_uuid)
        self._provider = provider
        self._key = _b64(PREFIX + self.name.encode())
        self._token = ""
        """This holder's value in the key while the lock is held."""
        self._generation = 0
        """The lease generation the lock was taken under."""
        self._unreleased = ""

    def _try(self) -> bool:
        lease = self._provider.lease
        token = self._provider.holder + uuidlib.uuid4().hex
        for _ in range(2):  # once more with a new lease if it had expired
            lease_id, generation = lease.current()
            txn = {
                "compare": [
                    {
                        "key": self._key,
                        "result": "EQUAL",
                        "target": "CREATE",
                        "create_revision": 0,
                    }
                ],
                "success": [
                    {
                        "request_put": {
                            "key": self._key,
                            "value": _b64(token.encode()),
                            "lease": lease_id,
                        }
                    }
                ],
            }
            try:
                taken = self._provider.transaction(txn)
            except Exception as exc:
                if _lease_gone(exc):
                    lease.lost(lease_id)
                    continue
                # No answer: etcd may have written the key all the same (it
                # stopped between writing and answering). Under this
                # process's lease such a key would hold the node for as long
                # as the process lives, so it is deleted once etcd answers.
                self._provider.delete_later(self._key, token, generation, "")
                raise
            if taken:
                self._token, self._generation = token, generation
            return taken
        return False

    def _give_back(self) -> bool:
        self._unreleased, self._token = self._token, ""
        return self._provider.delete_if(self._key, self._unreleased)

    def _release_later(self) -> None:
        """The lease is refreshed while the process lives, so the lock would
        stay taken: the provider's cleanup thread releases it once the
        backend answers again. If the
        backend stays away longer than the lease's TTL, the lease (and the
        lock) run out and there is nothing left to release."""
        self._provider.delete_later(
            self._key,
            self._unreleased,
            self._generation,
            f"Lock {self.name} released after the coordination backend came back",
        )

    def is_locked(self) -> bool:
        return bool(self._token)


class EtcdLockProvider(LockProvider):
    """Locks named ``ironic_inspector.<node uuid>`` in etcd, on one lease
    of ``ttl`` seconds (tooz's ``lock_timeout``) for the whole process.

    A conductor's ``holder`` (``host/run``) prefixes the value of each lock
    it takes, so that the leader can tell the locks of a conductor that
    left the group and break them (:meth:`break_lock`) instead of waiting
    out their lease."""

    def __init__(
        self, client: "Etcd3Client", ttl: int, holder: str | None = None
    ) -> None:
        self._client = client
        self.holder = f"{holder}/" if holder else ""
        self.lease = _Lease(client, ttl)
        self._pending: dict[tuple[str, str], tuple[int, str]] = {}
        """Keys to delete once etcd answers: (key, token) -> (lease
        generation, what to log when done)."""
        self._pending_guard = threading.Lock()
        self._deleter: threading.Thread | None = None
        self._stopped = threading.Event()

    def get_lock(self, node_uuid: str) -> NodeLock:
        return EtcdLock(self, node_uuid)

    def holders(self) -> dict[str, str]:
        """Every node lock in etcd (one range request)."""
        start = PREFIX + b"ironic_inspector."
        end = start[:-1] + bytes([start[-1] + 1])
        result = self._client.post(
            self._client.get_url("/kv/range"),
            json={"key": _b64(start), "range_end": _b64(end)},
        )
        return {
            base64.b64decode(kv["key"])[len(PREFIX) :].decode(errors="replace"): (
                base64.b64decode(kv.get("value", "")).decode(errors="replace")
            )
            for kv in result.get("kvs", [])
        }

    def break_lock(self, key: str, value: str) -> bool:
        return self.delete_if(_b64(PREFIX + key.encode()), value)

    def transaction(self, txn: dict[str, Any]) -> bool:
        """Whether etcd ran the transaction's success branch."""
        result = self._client.post(
            self._client.get_url("/kv/txn"), data=json.dumps(txn)
        )
        return bool(result.get("succeeded", False))

    def delete_if(self, key: str, token: str) -> bool:
        """Delete ``key`` if it still holds ``token``; whether it did."""
        return self.transaction(
            {
                "compare": [
                    {
                        "key": key,
                        "result": "EQUAL",
                        "target": "VALUE",
                        "value": _b64(token.encode()),
                    }
                ],
                "success": [{"request_delete_range": {"key": key}}],
            }
        )

    def delete_later(self, key: str, token: str, generation: int, done: str) -> None:
        """Delete ``key`` if it holds ``token``, once etcd answers again (one
        thread tries every pending key, waiting longer after each failed
        round); dropped when the lease of ``generation`` is gone, since
        the key went with it. ``done`` is logged once deleted."""
        with self._pending_guard:
            self._pending[(key, token)] = (generation, done)
            if self._deleter is None:
                self._deleter = threading.Thread(
                    target=self._delete_pending, name="lock-cleanup", daemon=True
                )
                self._deleter.start()

    def _delete_pending(self) -> None:
        delay = RETRY_FIRST_SECONDS
        while not self._stopped.wait(delay):
            delay = min(delay * 2, RELEASE_RETRY_SECONDS)
            with self._pending_guard:
                pending = dict(self._pending)
            for (key, token), (generation, done) in pending.items():
                if self.lease.generation == generation:
                    try:
                        self.delete_if(key, token)
                    except Exception as exc:  # the backend is still away
                        LOG.debug("Deleting lock key failed again: %s", exc)
                        break
                    if done:
                        LOG.info("%s", done)
                with self._pending_guard:
                    self._pending.pop((key, token), None)
            with self._pending_guard:
                if not self._pending:
                    self._deleter = None
                    return

    def stop(self) -> None:
        self._stopped.set()
        self.lease.stop()
