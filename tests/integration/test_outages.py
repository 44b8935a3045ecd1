"""Backend outages under several API processes lose no introspection.

The split shape with two conductors, its API either under a real Apache
with the shipped vhost's four daemon processes or as two
``ironic-inspector-api-wsgi`` processes (the ramdisks post to the second,
which has never routed work before the first outage: it has no view of
the conductor group to fall back on). etcd, PostgreSQL and RabbitMQ are
taken down in turn while ramdisks post (retrying as ironic-python-agent
does) and an operator starts, aborts and reapplies (retrying a 503 or a
409). Every introspection must end as asked: finished, or canceled by the
abort; none in ``error`` because of an outage. Meanwhile the leader
lease's epoch, read from the database, must never go down, across the
database outage and a restart of the leading conductor.
"""

import concurrent.futures
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests
import sqlalchemy as sa

from lab.servers.split_cluster import SplitCluster
from tests.integration.conftest import (
    Client,
    Lab,
    SplitFactory,
    introspect,
    wait_until,
)

OUTAGE = 8.0
"""Seconds each backend stays down."""

IPA_WAITS = (5.0, 5.0, 6.0, 12.0)
"""ironic-python-agent 13's waits between its 5 tries of the callback
(tenacity, exponential x1.5, 5 to 30 s), on a connection error, a 5xx or
a 409."""

OPTIONS = {
    "DEFAULT": {"introspection_delay": "0"},
    "coordination": {
        "sweep_interval": "1",
        "leader_lease": "3",
        "claim_timeout": "5",
    },
}


class Shape:
    def __init__(self, cluster: SplitCluster, operator_url: str, ramdisk_url: str):
        self.cluster = cluster
        self.operator = Client(operator_url)
        self.ramdisk_url = ramdisk_url


@pytest.fixture(scope="module", params=["apache", "two-api"])
def shape(
    request: pytest.FixtureRequest, split_cluster: SplitFactory
) -> Iterator[Shape]:
    apache = request.param == "apache"
    with split_cluster(
        f"outages_{request.param.replace('-', '_')}",
        conductors=2,
        api_server="apache" if apache else "local",
        api_processes=4,
        options=OPTIONS,
    ) as cluster:
        if apache:
            yield Shape(cluster, cluster.url, cluster.url)
            return
        fresh = cluster.add_api("lab-api-2")
        try:
            yield Shape(cluster, cluster.url, fresh.url)
        finally:
            fresh.stop()


def post_like_ipa(url: str, payload: dict[str, Any]) -> tuple[int, Any, int]:
    """The ramdisk's callback: (status, body, tries)."""
    status, body = 0, None
    for attempt, wait in enumerate((*IPA_WAITS, None), 1):
        try:
            resp = requests.post(f"{url}/v1/continue", json=payload, timeout=30)
        except requests.ConnectionError as exc:
            status, body = 0, str(exc)
        else:
            status, body = resp.status_code, resp.text
            if status < 500 and status != 409:
                return status, resp.json(), attempt
        if wait is None:
            return status, body, attempt
        time.sleep(wait)
    raise AssertionError("unreachable")


def act(client: Client, path: str, within: float = 90.0) -> tuple[int, int]:
    """An operator's POST, retried on 503 and 409 as a script would:
    (final status, tries)."""
    deadline = time.monotonic() + within
    tries = 0
    while True:
        tries += 1
        resp = client.post(path)
        if resp.status_code not in (503, 409) or time.monotonic() > deadline:
            return resp.status_code, tries
        time.sleep(1.0)


class EpochWatch:
    """Reads the leader lease's epoch every 0.2 s (unreadable while the
    database is down) and records each value seen."""

    def __init__(self, url: str) -> None:
        self._engine = sa.create_engine(url, pool_pre_ping=True)
        self.seen: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            try:
                with self._engine.connect() as conn:
                    epoch = conn.execute(
                        sa.text("SELECT epoch FROM leases WHERE name = 'leader'")
                    ).scalar()
            except sa.exc.SQLAlchemyError:
                continue
            if epoch is not None and (not self.seen or self.seen[-1] != epoch):
                self.seen.append(int(epoch))

    def __enter__(self) -> "EpochWatch":
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self._engine.dispose()


def _outages(cluster: SplitCluster) -> dict[str, tuple[Callable[[], object], ...]]:
    return {
        # etcd first: the ramdisks' API process has routed nothing yet
        "etcd": (cluster.etcd.stop, cluster.etcd.start),
        "postgresql": (cluster.postgres.pause, cluster.postgres.resume),
        "rabbitmq": (cluster.rabbit.stop, cluster.rabbit.start),
    }


def _during_outage(
    shape: Shape, lab: Lab, down: Callable[[], object], up: Callable[[], object]
) -> dict[str, str]:
    """One outage with work in flight; the expected end of each node."""
    op = shape.operator
    waiting = lab.machines(4)  # three ramdisks post, one is aborted
    later = lab.machines(2)  # started during the outage
    (done,) = lab.machines(1)  # finished before, reapplied during it
    introspect(op, done)
    introspect(op, *waiting, until="waiting")
    expected = {uuid: "finished" for _m, uuid in [*waiting[:3], *later, done]}
    expected[waiting[3][1]] = "canceled"
    down()
    downed = time.monotonic()
    pool = concurrent.futures.ThreadPoolExecutor(8)
    try:
        posts = {
            uuid: pool.submit(post_like_ipa, shape.ramdisk_url, machine.payload())
            for machine, uuid in waiting[:3]
        }
        actions = {
            "abort": pool.submit(act, op, f"/v1/introspection/{waiting[3][1]}/abort"),
            "reapply": pool.submit(
                act, op, f"/v1/introspection/{done[1]}/data/unprocessed"
            ),
            **{
                f"start {uuid}": pool.submit(act, op, f"/v1/introspection/{uuid}")
                for _m, uuid in later
            },
        }
        time.sleep(max(0.0, OUTAGE - (time.monotonic() - downed)))
        up()
        print(f"  backend back after {time.monotonic() - downed:.1f} s")
        for uuid, future in posts.items():
            status, body, tries = future.result()
            print(f"  ramdisk post {uuid}: {status} after {tries} tries")
            assert status == 200, (uuid, status, body)
        for name, action in actions.items():
            answer, tries = action.result()
            print(f"  {name}: {answer} after {tries} tries")
            assert answer == 202, (name, answer)
    finally:
        pool.shutdown(wait=True)
    for machine, uuid in later:
        op.wait_for(uuid, "waiting", "finished", "error", timeout=90)
        status, body, _tries = post_like_ipa(shape.ramdisk_url, machine.payload())
        assert status == 200, (uuid, status, body)
    return expected


def _final(op: Client, expected: dict[str, str]) -> dict[str, dict[str, Any]]:
    ends: dict[str, dict[str, Any]] = {}
    for uuid in expected:
        ends[uuid] = op.wait_for(uuid, "finished", "error", timeout=120)
    return ends


@pytest.mark.timeout(900)
def test_outages_lose_nothing(shape: Shape, lab: Lab) -> None:
    cluster = shape.cluster
    with EpochWatch(cluster.database_url) as epochs:
        for backend, (down, up) in _outages(cluster).items():
            print(f"{backend} down for {OUTAGE:.0f} s")
            expected = _during_outage(shape, lab, down, up)
            ends = _final(shape.operator, expected)
            for uuid, want in expected.items():
                status = ends[uuid]
                if want == "canceled":
                    assert status["state"] == "error", (backend, status)
                    assert status["error"] == "Canceled by operator", (backend, status)
                else:
                    assert status["state"] == "finished", (backend, status)
        # a restart of the leading conductor starts a new term
        before = epochs.seen[-1]
        leader = _leader(cluster)
        leader.stop()
        leader.start(dbsync=False)
        wait_until(
            lambda: epochs.seen[-1] > before, 30, "a new leader term after the restart"
        )
    print(f"leader epochs seen: {epochs.seen}")
    assert epochs.seen == sorted(epochs.seen), epochs.seen
    assert len(epochs.seen) >= 2


def _leader(cluster: SplitCluster) -> Any:
    engine = sa.create_engine(cluster.database_url)
    try:
        with engine.connect() as conn:
            holder = conn.execute(
                sa.text("SELECT holder FROM leases WHERE name = 'leader'")
            ).scalar()
    finally:
        engine.dispose()
    assert holder, "no leader"
    host = str(holder).split("/", 1)[0]
    return next(c for c in cluster.conductors if c.host == host)


def test_fresh_api_process_takes_ramdisk_data_while_etcd_is_down(
    shape: Shape, lab: Lab
) -> None:
    """The reported loss, on its own: a post reaching an API process that
    cannot read the group is stored and processed, never ended."""
    (node,) = lab.machines(1)
    introspect(shape.operator, node, until="waiting")
    fresh = shape.cluster.add_api("lab-api-fresh")
    try:
        shape.cluster.etcd.stop()
        try:
            status, body, tries = post_like_ipa(fresh.url, node[0].payload())
        finally:
            shape.cluster.etcd.start()
        assert (status, tries) == (200, 1), body
        assert body == {"uuid": node[1]}
        end = shape.operator.wait_for(node[1], "finished", "error", timeout=90)
        assert end["state"] == "finished", end
    finally:
        fresh.stop()
