"""Node locks on one etcd lease per process, against a real etcd: they
exclude each other and tooz's own etcd locks, cost one request to take
and one to give back, leave no lease behind per try, and survive their
lease expiring."""

import logging
import pathlib
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from oslo_config import cfg
from tooz import coordination as tooz_coordination

from inspector.conf import opts
from inspector.coordination.backend import direct_access, start_coordinator
from inspector.locking import etcd_locks, factory
from inspector.locking.base import holder_host
from lab.servers.etcd import EtcdServer

NODE = "6d3f6cf8-1f37-4a0f-9d0d-2b6f7c1f0e11"


@pytest.fixture(scope="module")
def etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdServer]:
    server = EtcdServer(tmp_path_factory.mktemp("etcd-locks"), in_memory=True)
    server.start()
    yield server
    server.close()


class Process:
    """What one inspector process has: a coordinator, its lock provider,
    and a count of the etcd requests the locks send."""

    def __init__(self, url: str, member: str, holder: str | None = None) -> None:
        conf = cfg.ConfigOpts()
        opts.register_all(conf)
        conf([], project="ironic-inspector", default_config_files=[])
        conf.set_override("standalone", False)
        conf.set_override("backend_url", url, group="coordination")
        self.coordinator = start_coordinator(conf, member)
        locks = factory.from_conf(conf, self.coordinator, holder)
        assert isinstance(locks, etcd_locks.EtcdLockProvider)
        self.locks = locks
        _, self.client = direct_access(self.coordinator)
        self.requests: list[str] = []
        post = self.client.post

        def counted(url: str, *args: Any, **kwargs: Any) -> Any:
            self.requests.append(url.rsplit("/", 1)[-1])
            return post(url, *args, **kwargs)

        self.client.post = counted

    def stop(self) -> None:
        self.locks.stop()
        self.coordinator.stop()


@pytest.fixture
def processes(etcd: EtcdServer) -> Iterator[Any]:
    made: list[Process] = []

    def make(url: str | None = None, holder: str | None = None) -> Process:
        made.append(Process(url or etcd.tooz_url(), f"member-{len(made)}", holder))
        return made[-1]

    yield make
    for process in made:
        process.stop()


def _leases(etcd: EtcdServer) -> set[str]:
    answer = requests.post(f"{etcd.url}/v3/lease/leases", json={}, timeout=5)
    return {lease["ID"] for lease in answer.json().get("leases", [])}


def test_two_processes_exclude_each_other_at_two_requests_per_lock(
    etcd: EtcdServer, processes: Any
) -> None:
    first, second = processes(), processes()
    mine, theirs = first.locks.get_lock(NODE), second.locks.get_lock(NODE)
    assert mine.acquire(blocking=False)
    assert mine.is_locked()
    leases = _leases(etcd)
    second.locks.get_lock("warm-up").acquire()  # its lease is granted once
    second.requests.clear()
    for _ in range(5):
        assert not theirs.acquire(blocking=False)
    assert not theirs.acquire(timeout=0.3)  # tries every 0.1 s, then gives up
    # every try is one transaction, and no try leaves a lease behind
    assert set(second.requests) == {"txn"}
    assert _leases(etcd) - leases == {_lease_id(second)}
    first.requests.clear()
    mine.release()
    assert first.requests == ["txn"] and not mine.is_locked()
    second.requests.clear()
    assert theirs.acquire(blocking=False)
    assert second.requests == ["txn"]
    # the next lock of the first process takes its lease as it is: one request
    first.requests.clear()
    other = first.locks.get_lock("another-node")
    assert other.acquire(blocking=False)
    other.release()
    assert first.requests == ["txn", "txn"]


def _lease_id(process: Process) -> str:
    lease_id, _generation = process.locks.lease.current()
    return str(lease_id)


def test_tooz_locks_and_ours_exclude_each_other(
    etcd: EtcdServer, processes: Any
) -> None:
    """A rolling upgrade runs processes of both kinds at once."""
    ours = processes().locks.get_lock(NODE)
    old = tooz_coordination.get_coordinator(etcd.tooz_url(), b"old-process")
    old.start(start_heart=False)
    try:
        theirs = old.get_lock(f"ironic_inspector.{NODE}".encode())
        assert theirs.acquire(blocking=False)
        assert not ours.acquire(blocking=False)
        theirs.release()
        assert ours.acquire(blocking=False)
        assert not theirs.acquire(blocking=False)
        ours.release()
        assert theirs.acquire(blocking=False)
        theirs.release()
    finally:
        old.stop()


def test_an_expired_lease_is_replaced_and_its_locks_are_lost(
    etcd: EtcdServer, processes: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A process cut off longer than the TTL finds its lease gone: the next
    lock gets a new lease, the lock it held is free for others, and giving
    it back says it was no longer ours."""
    caplog.set_level(logging.INFO)
    first, second = processes(), processes()
    held = first.locks.get_lock(NODE)
    assert held.acquire(blocking=False)
    lease_id, generation = first.locks.lease.current()
    requests.post(
        f"{etcd.url}/v3/kv/lease/revoke", json={"ID": lease_id}, timeout=5
    ).raise_for_status()
    assert second.locks.get_lock(NODE).acquire(blocking=False)
    another = first.locks.get_lock("another-node")
    assert another.acquire(blocking=False)  # the lease is granted anew
    assert first.locks.lease.current()[1] == generation + 1
    held.release()
    assert "was no longer ours" in caplog.text
    assert "expired; locks held under it are no longer held" in caplog.text
    another.release()


def test_the_lease_is_kept_alive_and_given_back_on_stop(
    etcd: EtcdServer, processes: Any
) -> None:
    first = processes(etcd.tooz_url(timeout=3))  # a TTL of 3 s
    second = processes()
    held = first.locks.get_lock(NODE)
    assert held.acquire(blocking=False)
    time.sleep(4.5)  # past the TTL: refreshed every second meanwhile
    assert not second.locks.get_lock(NODE).acquire(blocking=False)
    assert "keepalive" in first.requests
    first.locks.stop()  # the lease is revoked: the lock goes at once
    assert second.locks.get_lock(NODE).acquire(blocking=False)


def test_a_dead_process_s_locks_run_out_with_its_lease(
    etcd: EtcdServer, processes: Any, tmp_path: pathlib.Path
) -> None:
    first = processes(etcd.tooz_url(timeout=2))
    second = processes()
    assert first.locks.get_lock(NODE).acquire(blocking=False)
    first.locks.lease._stopped.set()  # as if the process had died
    assert not second.locks.get_lock(NODE).acquire(blocking=False)
    assert second.locks.get_lock(NODE).acquire(timeout=6)


def test_a_conductor_s_locks_name_it_and_can_be_broken(
    etcd: EtcdServer, processes: Any
) -> None:
    """The leader lists the locks, sees which conductor holds each, and
    breaks the lock of one that left the group (issue 35) while its lease
    still runs; a lock whose value changed meanwhile is left alone."""
    dead = processes(holder="c-dead/run-1")
    api = processes()  # the API's locks name no conductor
    leader = processes(holder="c-leader/run-2")
    other = "0b7c2c9e-35a4-4a44-9b36-1d1f0cc5a0a1"
    assert dead.locks.get_lock(NODE).acquire(blocking=False)
    assert api.locks.get_lock(other).acquire(blocking=False)
    held = leader.locks.holders()
    value = held[f"ironic_inspector.{NODE}"]
    assert value.startswith("c-dead/run-1/")
    assert holder_host(value) == "c-dead"
    assert holder_host(held[f"ironic_inspector.{other}"]) is None
    assert not leader.locks.break_lock(f"ironic_inspector.{NODE}", value + "x")
    assert not leader.locks.get_lock(NODE).acquire(blocking=False)
    assert leader.locks.break_lock(f"ironic_inspector.{NODE}", value)
    assert leader.locks.get_lock(NODE).acquire(blocking=False)
