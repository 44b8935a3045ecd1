"""Chaos: 100 introspections in flight while conductors and backends fail.

Three conductors against the real Ironic; meanwhile the test SIGKILLs
conductors while they own steps (holding node locks, mid-processing),
restarts one, and restarts etcd and RabbitMQ once each (on JSON-RPC, with
no broker, a conductor is frozen for a few seconds instead: casts to it time
out and go to another). Every introspection
must end ``finished``, none stuck, every step a killed conductor owned taken
over within the deadline. Bounded in time; everything on loopback.
"""

import concurrent.futures
import itertools
import random
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from lab.machines import hardware
from lab.machines.enroll import IronicAPI, enroll_one
from lab.machines.hardware import Machine
from lab.machines.ramdisk import post_continue
from lab.servers.inspector import ConductorServer
from lab.servers.split_cluster import SplitCluster
from tests.integration.conftest import Client, SplitFactory, kill, start

COUNT = 100
DEADLINE = 240.0
RESOLVE_WITHIN = 30.0
_names = itertools.count(21)


@pytest.fixture(scope="module", params=["oslo", "json-rpc"])
def cluster(
    request: pytest.FixtureRequest, split_cluster: SplitFactory
) -> Iterator[SplitCluster]:
    with split_cluster(
        f"chaos_{request.param.replace('-', '_')}",
        rpc_transport=request.param,
        options={
            "DEFAULT": {"introspection_delay": "0"},
            "coordination": {
                "sweep_interval": "1",
                "leader_lease": "3",
                "claim_timeout": "5",
            },
        },
    ) as split:
        yield split


def _owned(db: sa.engine.Engine, host: str) -> set[str]:
    with db.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT uuid FROM introspections WHERE owner = :host AND state IN "
                "('starting', 'processing', 'reapplying', 'aborting')"
            ),
            {"host": host},
        )
        return {r.uuid for r in rows}


def _states(db: sa.engine.Engine) -> dict[str, tuple[str, str | None, str | None]]:
    with db.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT uuid, state, owner, error FROM introspections")
        )
        return {r.uuid: (r.state, r.owner, r.error) for r in rows}


class Chaos:
    """The disruptions, each at its time after the start."""

    def __init__(self, cluster: SplitCluster, db: sa.engine.Engine) -> None:
        self.cluster = cluster
        self.db = db
        self.rng = random.Random(5)
        self.orphans: list[tuple[str, float, set[str]]] = []
        self.done: set[str] = set()
        self.log: list[str] = []
        self.frozen: ConductorServer | None = None
        self.stopping = threading.Event()

    def _busiest(self) -> ConductorServer:
        alive = [c for c in self.cluster.conductors if c.pid is not None]
        return max(
            alive, key=lambda c: (len(_owned(self.db, c.host)), self.rng.random())
        )

    def kill(self) -> None:
        victim = self._busiest()
        owned = _owned(self.db, victim.host)
        kill(victim)
        self.orphans.append((victim.host, time.monotonic(), owned))
        self.log.append(f"SIGKILL {victim.host} owning {len(owned)} steps")

    def add(self) -> None:
        host = f"lab-conductor-{next(_names)}"
        self.cluster.add_conductor(host)
        self.log.append(f"started {host}")

    def restart(self) -> None:
        conductor = next(c for c in self.cluster.conductors if c.pid is not None)
        conductor.stop()
        conductor.start(dbsync=False)
        self.log.append(f"restarted {conductor.host}")

    def restart_etcd(self) -> None:
        self.cluster.etcd.stop()
        self.cluster.etcd.start()
        self.log.append("restarted etcd")

    def restart_rabbitmq(self) -> None:
        self.cluster.rabbit.stop()
        self.cluster.rabbit.start()
        self.log.append("restarted RabbitMQ")

    def freeze(self) -> None:
        self.frozen = next(c for c in self.cluster.conductors if c.pid is not None)
        self.frozen.signal(signal.SIGSTOP)
        self.log.append(f"froze {self.frozen.host} for 4 s")

    def thaw(self) -> None:
        assert self.frozen is not None
        self.frozen.signal(signal.SIGCONT)
        self.log.append(f"thawed {self.frozen.host}")

    def run(self, events: list[tuple[float, Any]], started: float) -> None:
        """Each event at its time after ``started``, in order."""
        for at, event in events:
            if self.stopping.wait(max(0.0, started + at - time.monotonic())):
                return
            event()

    def schedule(self) -> list[tuple[float, Any]]:
        events: list[tuple[float, Any]] = [
            (3, self.kill),
            (6, self.add),
            (9, self.kill),
            (11, self.add),
            (13, self.restart),
            (16, self.restart_etcd),
        ]
        if self.cluster.rpc_transport == "oslo":
            return events + [(20, self.restart_rabbitmq)]
        return events + [(20, self.freeze), (24, self.thaw)]


def _start_all(client: Client, uuids: list[str]) -> None:
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda uuid: start(client, uuid, retry_for=60), uuids))


@pytest.mark.timeout(900)  # DEADLINE, plus enrolling and a cluster start-up
def test_chaos(
    cluster: SplitCluster, ironic_api: IronicAPI, db: sa.engine.Engine
) -> None:
    client = Client(cluster.url)
    # each cluster introspects machines of its own in the session's Ironic
    first = 5000 if cluster.rpc_transport == "oslo" else 5200
    lab_machines: list[Machine] = [
        hardware.make_machine(first + index, seed=11) for index in range(COUNT)
    ]
    by_uuid: dict[str, Machine] = {}
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        for machine, uuid in zip(
            lab_machines,
            pool.map(lambda m: enroll_one(ironic_api, m), lab_machines),
            strict=True,
        ):
            by_uuid[uuid] = machine
    chaos = Chaos(cluster, db)
    events = chaos.schedule()
    posted: dict[str, float] = {}
    ramdisks = concurrent.futures.ThreadPoolExecutor(16)
    started = time.monotonic()
    starter = concurrent.futures.ThreadPoolExecutor(1).submit(
        _start_all, client, list(by_uuid)
    )
    # the disruptions run on a thread of their own: some block for seconds
    # (a conductor draining before its restart, a broker restart), and the
    # takeovers are watched meanwhile, not after them
    disruptor = concurrent.futures.ThreadPoolExecutor(1).submit(
        chaos.run, events, started
    )
    worst = 0.0
    per_kill: dict[str, float] = {}
    try:
        while time.monotonic() - started < DEADLINE:
            now = time.monotonic()
            states = _states(db)
            # the ramdisks: a booted machine calls back, and again if its
            # introspection still waits a while later (as IPA retries)
            power = {
                n["uuid"]: n["power_state"]
                for n in ironic_api.nodes("uuid,power_state")
            }
            for uuid, (state, _owner, _error) in states.items():
                if (
                    state == "waiting"
                    and power.get(uuid) == "power on"
                    and now - posted.get(uuid, -10.0) > 5.0
                ):
                    posted[uuid] = now
                    ramdisks.submit(post_continue, cluster.url, by_uuid[uuid].payload())
            for host, killed_at, owned in list(chaos.orphans):
                for uuid in owned - chaos.done:
                    if uuid not in states:  # started after this look
                        continue
                    state, owner, _ = states[uuid]
                    if owner not in (host,) or state not in (
                        "starting",
                        "processing",
                    ):
                        chaos.done.add(uuid)
                        took = time.monotonic() - killed_at
                        worst = max(worst, took)
                        per_kill[host] = max(per_kill.get(host, 0.0), took)
            final = [s for s, _o, _e in states.values() if s in ("finished", "error")]
            if starter.done() and len(final) == COUNT and disruptor.done():
                break
            time.sleep(0.5)
        starter.result()
        disruptor.result()
    finally:
        chaos.stopping.set()
        ramdisks.shutdown(wait=True)
    elapsed = time.monotonic() - started
    states = _states(db)
    counts: dict[str, int] = {}
    for state, _owner, _error in states.values():
        counts[state] = counts.get(state, 0) + 1
    orphaned = sum(len(o) for _h, _t, o in chaos.orphans)
    print(
        f"\nchaos: {'; '.join(chaos.log)}\n"
        f"chaos: {COUNT} introspections in {elapsed:.1f} s: {counts}; "
        f"{orphaned} steps owned by killed conductors, worst taken over after "
        f"{worst:.1f} s (per kill: "
        + ", ".join(f"{h} {t:.1f} s" for h, t in per_kill.items())
        + ")"
    )
    errors = {u: e for u, (s, _o, e) in states.items() if s == "error"}
    assert not errors, errors
    assert counts.get("finished") == COUNT, counts
    assert orphaned > 0  # the kills did hit conductors in the middle of work
    assert chaos.done >= set().union(*(o for _h, _t, o in chaos.orphans))
    assert worst < RESOLVE_WITHIN, worst
