"""The coordination layer on tooz's file backend (a real driver, no server)."""

import concurrent.futures
import logging
import pathlib
import threading
import time
from collections.abc import Iterator
from typing import Any, cast
from unittest import mock

import kombu.exceptions
import oslo_messaging as messaging
import pytest
from oslo_config import cfg
from tooz import coordination

from inspector import exceptions
from inspector.conductor import rpcapi
from inspector.coordination import backend
from inspector.coordination.group import Membership
from inspector.coordination.members import FixedConductor, GroupMembers
from inspector.locking.tooz_locks import ToozLockProvider


@pytest.fixture(autouse=True)
def quick_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    """A coordinator's stop joins its executor's threads, which notice the
    shutdown only when their idle wait for work ends (futurist: 1 s each)."""
    from futurist import _thread

    monkeypatch.setattr(_thread.ThreadWorker, "MAX_IDLE_FOR", 0.05)


@pytest.fixture
def url(tmp_path: pathlib.Path) -> str:
    return f"file://{tmp_path}/coordination"


def _coordinator(url: str, member: str) -> Any:
    coordinator = coordination.get_coordinator(url, member.encode())
    coordinator.start()
    return coordinator


@pytest.fixture
def coordinators(url: str) -> Iterator[Any]:
    started: list[Any] = []

    def make(member: str) -> Any:
        started.append(_coordinator(url, member))
        return started[-1]

    yield make
    for coordinator in started:
        coordinator.stop()


def test_membership_join_rejoin_and_leave(coordinators: Any) -> None:
    conductor = coordinators("c1")
    observer = GroupMembers(coordinators("api"), ttl=0)
    membership = Membership(conductor, "c1", {"host": "c1"})
    assert observer.hosts() == []
    membership.start()
    try:
        assert observer.hosts() == ["c1"]
        caps = conductor.get_member_capabilities(backend.GROUP_ID, b"c1").get()
        assert caps["host"] == "c1" and "started_at" in caps
        # the membership vanishes behind our back (an expired lease)
        conductor.leave_group(backend.GROUP_ID).get()
        assert observer.hosts() == []
        membership.beat_once()
        assert observer.hosts() == ["c1"]
        assert membership.rejoins == 1
    finally:
        membership.stop()
    assert observer.hosts() == []


def test_restart_with_same_host_takes_the_place_over(coordinators: Any) -> None:
    first = Membership(coordinators("c1"), "c1", {})
    first.start()
    second = Membership(coordinators("c1"), "c1", {})
    second.start()  # no MemberAlreadyExist crash loop
    assert second.is_member()
    second.stop()
    first._stop.set()


def test_members_cache_and_pick(coordinators: Any) -> None:
    for host in ("a", "b"):
        Membership(coordinators(host), host, {})._join()
    members = GroupMembers(coordinators("api"), ttl=60)
    assert members.hosts() == ["a", "b"]
    assert {members.pick() for _ in range(50)} == {"a", "b"}
    assert members.pick(exclude=["a"]) == "b"
    Membership(coordinators("c"), "c", {})._join()
    assert members.hosts() == ["a", "b"]  # cached
    members.invalidate()
    assert members.hosts() == ["a", "b", "c"]
    with pytest.raises(exceptions.ServiceUnavailable, match="no conductor"):
        members.pick(exclude=["a", "b", "c"])


def test_the_router_reads_every_state_in_one_statement(coordinators: Any) -> None:
    """Disabled conductors come from the database the API shares with the
    conductors: one statement per refresh of the member cache, whatever
    the number of members."""
    import sqlalchemy as sa

    from inspector.coordination.conductor_state import DatabaseStateStore
    from inspector.db import engine, migration

    db = engine.Database("sqlite://")
    migration.ensure_schema(db)
    store = DatabaseStateStore(db)
    for host in ("a", "b", "c"):
        Membership(coordinators(host), host, {})._join()
    store.put("b", {"enabled": False, "reason": "disk swap"})
    store.put("gone", {"enabled": False})  # not a member: never routable
    statements: list[str] = []
    sa.event.listen(
        db.engine, "before_cursor_execute", lambda *a: statements.append(a[2])
    )
    members = GroupMembers(coordinators("api"), ttl=60, store=store)
    assert members.routable() == ["a", "c"]
    assert len(statements) == 1 and "conductor_states" in statements[0]
    store.put("a", {"enabled": False})
    store.put("c", {"enabled": False})
    members.invalidate()
    with pytest.raises(exceptions.NoConductor, match="every live conductor is dis"):
        members.pick()


def test_members_with_their_json_rpc_endpoints(coordinators: Any) -> None:
    Membership(
        coordinators("a"), "a", {"rpc_endpoint": "https://10.0.0.1:8089/"}
    )._join()
    Membership(coordinators("b"), "b", {"host": "b"})._join()  # on oslo
    members = GroupMembers(coordinators("api"), ttl=60, endpoints=True)
    assert members.hosts() == ["a", "b"]
    assert members.endpoint("a") == "https://10.0.0.1:8089/"
    assert members.endpoint("b") is None
    assert members.endpoint("gone") is None  # not a member: nothing to call
    # a member that joined after the cached read is read on its own
    Membership(coordinators("c"), "c", {"rpc_endpoint": "http://c:8090/"})._join()
    assert members.hosts() == ["a", "b"]
    assert members.endpoint("c") == "http://c:8090/"


def test_no_group_yet_means_no_conductor(coordinators: Any) -> None:
    with pytest.raises(
        exceptions.ServiceUnavailable, match="no conductor is available"
    ):
        GroupMembers(coordinators("api"), ttl=0).pick()


def test_backend_failure_is_503() -> None:
    broken = mock.Mock()
    broken.get_members_with_capabilities.side_effect = coordination.ToozConnectionError(
        "down"
    )
    with pytest.raises(exceptions.ServiceUnavailable, match="coordination backend"):
        GroupMembers(broken, ttl=0).hosts()


def test_api_router_keeps_routing_by_the_last_view_during_an_outage() -> None:
    backend = mock.Mock()
    read = backend.get_members_with_capabilities
    read.return_value.get.return_value = {b"a": {}, b"b": {}}
    router = GroupMembers(backend, ttl=0, stale_ok=True)
    assert router.hosts() == ["a", "b"]
    read.side_effect = coordination.ToozConnectionError("down")
    assert router.hosts() == ["a", "b"]  # the last view, not a 503
    assert router.pick() in {"a", "b"}
    sweep = GroupMembers(backend, ttl=0)  # the takeover sweep never guesses
    with pytest.raises(exceptions.ServiceUnavailable):
        sweep.hosts()
    fresh = GroupMembers(backend, ttl=0, stale_ok=True)  # nothing seen yet
    with pytest.raises(exceptions.ServiceUnavailable):
        fresh.hosts()
    read.side_effect = None
    read.return_value.get.return_value = {b"c": {}}
    assert router.hosts() == ["c"]  # back: the real view again


class SlowGroup:
    """A backend whose member reads wait for ``let_go`` once ``hold`` is set."""

    def __init__(self) -> None:
        self.members = {b"a", b"b"}
        self.reads = 0
        self.hold = threading.Event()
        self.reading = threading.Event()
        self.let_go = threading.Event()

    def get_members_with_capabilities(self, _group: bytes) -> Any:
        self.reads += 1
        if self.hold.is_set():
            self.reading.set()
            assert self.let_go.wait(10)
        answer = mock.Mock()
        answer.get.return_value = dict.fromkeys(self.members, {})
        return answer


def test_router_reads_the_group_once_while_threads_find_the_view_expired() -> None:
    group = SlowGroup()
    router = GroupMembers(cast(Any, group), ttl=0, stale_ok=True)
    assert router.hosts() == ["a", "b"]
    group.hold.set()
    group.members = {b"c"}
    reader = concurrent.futures.ThreadPoolExecutor(1).submit(router.hosts)
    assert group.reading.wait(10)
    # another request meanwhile routes by the view being replaced
    assert [router.hosts() for _ in range(5)] == [["a", "b"]] * 5
    assert group.reads == 2
    group.let_go.set()
    assert reader.result(10) == ["c"]
    assert group.reads == 2


class WatchedLock:
    """A lock that says when a caller begins to wait for it."""

    def __init__(self, lock: Any) -> None:
        self._lock = lock
        self.waiting = threading.Event()

    def acquire(self, blocking: bool = True) -> bool:
        if blocking and not self._lock.acquire(blocking=False):
            self.waiting.set()
            return bool(self._lock.acquire())
        return bool(self._lock.acquire(blocking=blocking))

    def release(self) -> None:
        self._lock.release()


def test_sweep_waits_for_a_read_under_way_and_reads_again() -> None:
    group = SlowGroup()
    sweep = GroupMembers(cast(Any, group), ttl=0)  # never acts on an old view
    assert sweep.hosts() == ["a", "b"]
    group.hold.set()
    group.members = {b"c"}
    pool = concurrent.futures.ThreadPoolExecutor(2)
    first = pool.submit(sweep.hosts)
    assert group.reading.wait(10)
    watched = WatchedLock(sweep._reading)  # the first holds it
    sweep._reading = watched  # type: ignore[assignment]
    second = pool.submit(sweep.hosts)
    assert watched.waiting.wait(10)  # the second waits for the read...
    assert not second.done()  # ...rather than answer the old view
    group.hold.clear()
    group.let_go.set()
    assert first.result(10) == ["c"] and second.result(10) == ["c"]
    assert group.reads == 3


def test_start_coordinator_unreachable_is_503() -> None:
    conf = cfg.ConfigOpts()
    conf.register_opts(
        [cfg.StrOpt("backend_url", default="etcd3+http://127.0.0.1:1?timeout=1")],
        group="coordination",
    )
    conf([])
    with pytest.raises(exceptions.ServiceUnavailable, match="127.0.0.1:1"):
        backend.start_coordinator(conf, "x")


def test_describe_hides_credentials() -> None:
    assert (
        backend.describe("redis://user:secret@10.0.0.1:6379/0?timeout=3")
        == "redis://10.0.0.1:6379/0"
    )


def test_tooz_locks_exclude_other_processes(coordinators: Any) -> None:
    mine = ToozLockProvider(coordinators("c1"))
    theirs = ToozLockProvider(coordinators("c2"))
    lock = mine.get_lock("n1")
    assert lock.name == "ironic_inspector.n1"
    assert lock.acquire(blocking=False)
    other = theirs.get_lock("n1")
    assert not other.acquire(blocking=False)
    started = time.monotonic()
    assert not other.acquire(timeout=0.3)
    assert time.monotonic() - started < 5
    lock.release()
    lock.release()  # harmless
    assert other.acquire(blocking=False)
    assert other.is_locked()
    other.release()


def test_tooz_lock_backend_failure_is_503() -> None:
    coordinator = mock.Mock()
    coordinator.get_lock.return_value.acquire.side_effect = coordination.ToozError("x")
    with pytest.raises(exceptions.ServiceUnavailable, match="lock node n1"):
        ToozLockProvider(coordinator).get_lock("n1").acquire(blocking=False)


class _Router:
    def __init__(self, hosts: list[str]) -> None:
        self.hosts = hosts
        self.invalidated = 0

    def pick(self, exclude: Any = ()) -> str:
        left = [h for h in self.hosts if h not in exclude]
        if not left:
            raise exceptions.ServiceUnavailable(reason="no conductor is available")
        return left[0]

    def invalidate(self) -> None:
        self.invalidated += 1


def _client(
    router: Any,
    failing: set[str],
    broker_down: bool = False,
    broker_error: Exception | None = None,
) -> tuple[rpcapi.ConductorClient, list[str]]:
    delivered: list[str] = []
    rpc = mock.Mock()

    def prepare(server: str, retry: int | None = None) -> Any:
        assert retry == rpcapi.CAST_RETRY  # never wait for the broker forever
        prepared = mock.Mock()

        def cast(_ctxt: Any, method: str, **_kw: Any) -> None:
            if broker_down:
                raise messaging.MessageDeliveryFailure("Unable to connect")
            if broker_error is not None:
                raise broker_error
            if server in failing:
                raise RuntimeError("this conductor's queue refused it")
            delivered.append(f"{method}@{server}")

        prepared.cast.side_effect = cast
        return prepared

    rpc.prepare.side_effect = prepare
    with mock.patch("oslo_messaging.get_rpc_client", return_value=rpc):
        conf = mock.Mock(transport_url="rabbit://inspector:secret@mq1:5672/")
        client = rpcapi.ConductorClient(rpcapi.OsloSender(conf, mock.Mock()), router)
    return client, delivered


def test_cast_retried_on_another_conductor() -> None:
    router = _Router(["a", "b", "c"])
    client, delivered = _client(router, failing={"a"})
    assert client.process("u", 3) == "b"
    assert delivered == ["process@b"]
    assert router.invalidated == 1


def test_cast_client_prepared_once_per_conductor() -> None:
    router = _Router(["a", "b"])
    client, delivered = _client(router, failing=set())
    rpc = client.sender._client
    for uuid in ("u1", "u2", "u3"):
        client.process(uuid, 1)
    router.hosts = ["b"]
    client.start_introspection("u4", 1)
    assert delivered == ["process@a"] * 3 + ["start_introspection@b"]
    assert [c.kwargs["server"] for c in rpc.prepare.call_args_list] == ["a", "b"]


def test_cast_gives_up_with_503_naming_the_tries() -> None:
    client, delivered = _client(_Router(["a", "b"]), failing={"a", "b"})
    with pytest.raises(exceptions.ServiceUnavailable, match=r"tried a, b"):
        client.start_introspection("u", 1)
    assert delivered == []


def test_broker_down_is_503_at_once() -> None:
    router = _Router(["a", "b", "c"])
    client, delivered = _client(router, failing=set(), broker_down=True)
    with pytest.raises(
        exceptions.ServiceUnavailable, match="broker rabbit://mq1:5672/ is unreachable"
    ):
        client.start_introspection("u", 1)
    assert delivered == [] and router.invalidated == 0  # no other conductor tried


@pytest.mark.parametrize(
    "error",
    [
        ConnectionRefusedError(111, "Connection refused"),
        kombu.exceptions.OperationalError("[Errno 111] Connection refused"),
    ],
)
def test_unreachable_broker_is_named(error: Exception) -> None:
    router = _Router(["a", "b", "c"])
    client, delivered = _client(router, failing=set(), broker_error=error)
    with pytest.raises(exceptions.ServiceUnavailable) as caught:
        client.start_introspection("u", 1)
    message = caught.value.message
    assert "the message broker rabbit://mq1:5672/ is unreachable" in message
    assert "Connection refused" in message and "secret" not in message
    assert "inspector@" not in message
    assert delivered == [] and router.invalidated == 0


def test_fixed_conductor() -> None:
    fixed = FixedConductor("me")
    assert fixed.pick() == "me" and fixed.hosts() == ["me"]
    with pytest.raises(exceptions.ServiceUnavailable):
        fixed.pick(exclude=["me"])


def test_failed_release_is_retried_then_lease_left_to_expire(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """etcd restarting during a release must not leave the node locked for
    good (the coordinator's heartbeat would refresh the lease forever)."""
    import time as time_module

    from tooz import coordination as tooz_coordination

    from inspector.locking import tooz_locks

    outcomes = [tooz_coordination.ToozConnectionError("etcd restarting")] * 2 + [True]
    released = []

    class Lock:
        def acquire(self, blocking: Any = True) -> bool:
            return True

        def release(self) -> bool:
            outcome = outcomes.pop(0)
            if isinstance(outcome, Exception):
                raise outcome
            released.append(True)
            return True

    real_sleep = time_module.sleep
    lock = Lock()
    coordinator = mock.Mock()
    coordinator.get_lock.return_value = lock
    coordinator._acquired_locks = {lock}
    monkeypatch.setattr(tooz_locks.time, "sleep", lambda _s: None)
    node_lock = tooz_locks.ToozLockProvider(coordinator).get_lock("u1")
    assert node_lock.acquire()
    node_lock.release()  # fails, retried in the background
    deadline = time_module.monotonic() + 5
    while not released and time_module.monotonic() < deadline:
        real_sleep(0.01)
    assert released == [True]

    # the backend never comes back: the lease is no longer refreshed
    outcomes[:] = [tooz_coordination.ToozConnectionError("gone")] * 10**6
    monkeypatch.setattr(tooz_locks, "RELEASE_RETRY_SECONDS", 0.05)
    monkeypatch.setattr(tooz_locks.time, "sleep", lambda _s: real_sleep(0.01))
    tooz_locks._retry_release(coordinator, cast(Any, lock), "ironic_inspector.u1")
    assert lock not in coordinator._acquired_locks


def test_api_routes_by_its_last_view_while_the_backend_is_away(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One line when the backend goes, one when it is back; the old view
    is used in between (the API's router only)."""
    down = {"now": False}

    class Group:
        def get_members_with_capabilities(self, _group: bytes) -> Any:
            if down["now"]:
                raise coordination.ToozConnectionError("etcd is away")
            return mock.Mock(get=lambda: {b"c-1": {}})

    members = GroupMembers(cast(Any, Group()), ttl=0, stale_ok=True)
    caplog.set_level(logging.INFO, logger="inspector.coordination.members")
    assert members.hosts() == ["c-1"]
    down["now"] = True
    assert members.hosts() == ["c-1"] and members.hosts() == ["c-1"]
    down["now"] = False
    assert members.hosts() == ["c-1"]
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert lines[0].startswith(
        "Routing by the last known conductors (c-1) while the coordination "
        "backend is away"
    )
    assert lines[1].startswith("Coordination backend back after")


class UpdatableFile:
    """tooz's file driver plus the capability updates etcd, Redis and
    memcached have (the file driver has none)."""

    def __init__(self, coordinator: Any) -> None:
        self._coordinator = coordinator

    def __getattr__(self, name: str) -> Any:
        return getattr(self._coordinator, name)

    def update_capabilities(self, group: bytes, capabilities: Any) -> Any:
        self._coordinator.leave_group(group).get()
        return self._coordinator.join_group(group, capabilities)


def test_a_stopping_conductor_stays_a_member_and_gets_no_new_work(
    coordinators: Any,
) -> None:
    stays = Membership(coordinators("a"), "a", {})
    stops = Membership(cast(Any, UpdatableFile(coordinators("b"))), "b", {})
    stays._join()
    stops._join()
    router = GroupMembers(coordinators("api"), ttl=0, stale_ok=True)
    sweep = GroupMembers(coordinators("sweep"), ttl=0)
    assert router.routable() == ["a", "b"]
    assert stops.drain() is True
    assert router.routable() == ["a"]
    assert {router.pick() for _ in range(20)} == {"a"}
    # still a member: the leader's sweep does not take its work over
    assert sweep.hosts() == ["a", "b"] and router.hosts() == ["a", "b"]
    with pytest.raises(exceptions.ServiceUnavailable) as refused:
        router.pick(exclude=["a"])
    assert str(refused.value).startswith(
        "Service temporarily unavailable: no conductor is available: every "
        "live conductor is stopping (b)"
    )
    stops.beat_once()  # heartbeats go on, and keep saying it
    assert router.routable() == ["a"]
    stops.stop()
    assert sweep.hosts() == ["a"]


def test_a_backend_without_capability_updates_cannot_say_it(
    coordinators: Any,
) -> None:
    membership = Membership(coordinators("b"), "b", {})
    membership._join()
    assert membership.drain() is False  # the caller leaves the group first
    membership.stop()


def test_membership_start_beats_before_it_joins() -> None:
    calls: list[str] = []

    class Recorder:
        def heartbeat(self) -> float:
            calls.append("heartbeat")
            return 1.0

        def create_group(self, group: Any) -> Any:
            calls.append("create_group")
            return type("Done", (), {"get": lambda self: None})()

        def join_group(self, group: Any, capabilities: Any) -> Any:
            calls.append("join_group")
            return type("Done", (), {"get": lambda self: None})()

    membership = Membership(cast(Any, Recorder()), "c1", {})
    membership._thread = cast(Any, type("NoThread", (), {"start": lambda self: None})())
    membership.start()
    # an expired membership lease is made again before etcd would refuse
    # the join with "Not Found" (a slow start-up on a loaded host)
    assert calls == ["heartbeat", "create_group", "join_group"]
