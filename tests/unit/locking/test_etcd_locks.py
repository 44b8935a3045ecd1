"""The etcd lock's behaviour when etcd fails under it (a real etcd is in
tests/integration/test_etcd_locks.py)."""

import threading
from typing import Any, cast

import pytest
import requests

from inspector import exceptions
from inspector.locking import etcd_locks
from lab.waiting import wait_until


class FakeEtcd:
    """Answers the lease grant and transactions; fails while ``down``."""

    def __init__(self) -> None:
        self.down = False
        self.answer_lost = False
        """Write, then fail as if etcd stopped before answering."""
        self.keys: dict[str, str] = {}
        self.released = threading.Event()
        self.refused = 0
        """Requests refused while ``down``."""

    def get_url(self, path: str) -> str:
        return path

    def lease(self, ttl: int) -> Any:
        return type("Lease", (), {"id": 7})()

    def post(self, url: str, json: Any = None, data: Any = None) -> Any:
        import json as json_module

        if self.down:
            self.refused += 1
            raise requests.ConnectionError("etcd is restarting")
        if url != "/kv/txn":
            return {"result": {"TTL": 30}}
        txn = json_module.loads(data)
        key = txn["compare"][0]["key"]
        if "request_put" in txn["success"][0]:
            if key in self.keys:
                return {"succeeded": False}
            self.keys[key] = txn["success"][0]["request_put"]["value"]
            if self.answer_lost:
                raise requests.ConnectionError("etcd stopped before answering")
            return {"succeeded": True}
        if self.keys.get(key) != txn["compare"][0]["value"]:
            return {"succeeded": False}
        del self.keys[key]
        self.released.set()
        return {"succeeded": True}


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(etcd_locks, "RETRY_FIRST_SECONDS", 0.01)
    monkeypatch.setattr(etcd_locks, "RELEASE_RETRY_SECONDS", 0.02)


def _cleanup_threads() -> list[threading.Thread]:
    return [
        t for t in threading.enumerate() if t.name == "lock-cleanup" and t.is_alive()
    ]


def test_a_refused_release_is_retried_until_etcd_answers(fast: None) -> None:
    etcd = FakeEtcd()
    provider = etcd_locks.EtcdLockProvider(cast(Any, etcd), 30)
    lock = provider.get_lock("u1")
    assert lock.acquire(blocking=False)
    etcd.down = True
    with pytest.raises(exceptions.ServiceUnavailable):
        provider.get_lock("u2").acquire(blocking=False)
    lock.release()  # refused: retried in the background
    assert not lock.is_locked() and etcd.keys
    refused = etcd.refused
    wait_until(lambda: etcd.refused, 5, "a retry", until=lambda n: n > refused)
    assert etcd.keys  # still down
    etcd.down = False
    assert etcd.released.wait(5)
    assert not etcd.keys
    assert provider.get_lock("u1").acquire(blocking=False)


def test_the_retry_ends_when_the_lease_is_gone(fast: None) -> None:
    """etcd away longer than the TTL: the lease, and the lock with it, ran
    out; there is nothing left to release."""
    etcd = FakeEtcd()
    provider = etcd_locks.EtcdLockProvider(cast(Any, etcd), 30)
    lock = provider.get_lock("u1")
    assert lock.acquire(blocking=False)
    etcd.down = True
    lock.release()
    retrying = wait_until(_cleanup_threads, 5, "the lock-cleanup thread")
    provider.lease.lost(7)
    assert provider.lease.current()[1] == 2  # a new lease, etcd still away
    retrying[0].join(5)
    assert not retrying[0].is_alive()
    assert etcd.keys  # never released: it went with the old lease


def _lost_take() -> tuple[FakeEtcd, Any]:
    """A lock whose try etcd wrote but never answered."""
    etcd = FakeEtcd()
    provider = etcd_locks.EtcdLockProvider(cast(Any, etcd), 30)
    etcd.answer_lost = True
    lock = provider.get_lock("u1")
    with pytest.raises(exceptions.ServiceUnavailable):
        lock.acquire(blocking=False)
    return etcd, lock


def test_a_take_whose_answer_was_lost_is_undone(fast: None) -> None:
    """etcd wrote the key but stopped before answering: the try failed for
    the caller, and the key (alive under the process's lease) is deleted
    once etcd answers, so the node is not held for the process's life."""
    etcd, lock = _lost_take()
    assert not lock.is_locked() and etcd.keys  # written, not known to be ours
    etcd.answer_lost = False
    assert etcd.released.wait(5)
    assert not etcd.keys
    assert lock.acquire(blocking=False)
    assert lock.is_locked()


def test_an_undone_take_never_deletes_a_later_hold(fast: None) -> None:
    """The deletion compares the lost try's own value: the same lock taken
    again meanwhile (a new value) stays taken."""
    etcd, lock = _lost_take()
    etcd.answer_lost = False
    etcd.keys.clear()  # as if the lost write had run out meanwhile
    assert lock.acquire(blocking=False)
    held = dict(etcd.keys)
    for thread in _cleanup_threads():
        thread.join(5)
    assert etcd.keys == held and lock.is_locked()
