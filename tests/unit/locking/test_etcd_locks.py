"""The etcd lock's behaviour when etcd fails under it (a real etcd is in
tests/integration/test_etcd_locks.py)."""

import threading
import time
from typing import Any

import pytest
import requests

from inspector import exceptions
from inspector.locking import etcd_locks


class FakeEtcd:
    """Answers the lease grant and transactions; fails while ``down``."""

    def __init__(self) -> None:
        self.down = False
        self.keys: dict[str, str] = {}
        self.released = threading.Event()

    def get_url(self, path: str) -> str:
        return path

    def lease(self, ttl: int) -> Any:
        return type("Lease", (), {"id": 7})()

    def post(self, url: str, json: Any = None, data: Any = None) -> Any:
        import json as json_module

        if self.down:
            raise requests.ConnectionError("etcd is restarting")
        if url != "/kv/txn":
            return {"result": {"TTL": 30}}
        txn = json_module.loads(data)
        key = txn["compare"][0]["key"]
        if "request_put" in txn["success"][0]:
            if key in self.keys:
                return {"succeeded": False}
            self.keys[key] = txn["success"][0]["request_put"]["value"]
            return {"succeeded": True}
        if self.keys.get(key) != txn["compare"][0]["value"]:
            return {"succeeded": False}
        del self.keys[key]
        self.released.set()
        return {"succeeded": True}


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    real_sleep = time.sleep
    monkeypatch.setattr(etcd_locks.time, "sleep", lambda _s: real_sleep(0.01))


def test_a_refused_release_is_retried_until_etcd_answers(fast: None) -> None:
    etcd = FakeEtcd()
    provider = etcd_locks.EtcdLockProvider(etcd, 30)
    lock = provider.get_lock("u1")
    assert lock.acquire(blocking=False)
    etcd.down = True
    with pytest.raises(exceptions.ServiceUnavailable):
        provider.get_lock("u2").acquire(blocking=False)
    lock.release()  # refused: retried in the background
    assert not lock.is_locked() and etcd.keys
    time.sleep(0.05)
    assert etcd.keys  # still down
    etcd.down = False
    assert etcd.released.wait(5)
    assert not etcd.keys
    assert provider.get_lock("u1").acquire(blocking=False)


def test_the_retry_ends_when_the_lease_is_gone(fast: None) -> None:
    """etcd away longer than the TTL: the lease, and the lock with it, ran
    out; there is nothing left to release."""
    etcd = FakeEtcd()
    provider = etcd_locks.EtcdLockProvider(etcd, 30)
    lock = provider.get_lock("u1")
    assert lock.acquire(blocking=False)
    etcd.down = True
    lock.release()
    retrying = [t for t in threading.enumerate() if t.name == "release-u1"]
    assert retrying
    provider.lease.lost(7)
    assert provider.lease.current()[1] == 2  # a new lease, etcd still away
    retrying[0].join(5)
    assert not retrying[0].is_alive()
    assert etcd.keys  # never released: it went with the old lease
