"""Failure survival in split mode: killed, paused and leading conductors.

Real etcd, PostgreSQL, Ironic and conductor processes, with the casts on
RabbitMQ and (a second cluster) on JSON-RPC. Power-ons
are spaced 3 s apart (cluster-wide), so a conductor can be caught owning a
step it has not acted on yet: it is waiting for its power-on slot.
"""

import collections
import itertools
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from lab.servers.inspector import ConductorServer
from lab.servers.ironic import IronicServer
from lab.servers.ironic_log import AccessLog
from lab.servers.split_cluster import SplitCluster
from tests.integration.conftest import (
    Client,
    Lab,
    Node,
    SplitFactory,
    ensure_conductors,
    kill,
    start,
    wait_until,
)

_spares = (f"lab-conductor-{n}" for n in itertools.count(11))
DELAY = 3.0
LEASE = 3.0


@pytest.fixture(scope="module", params=["oslo", "json-rpc"])
def cluster(
    request: pytest.FixtureRequest, split_cluster: SplitFactory
) -> Iterator[SplitCluster]:
    """Under each transport: RabbitMQ, or the conductors' JSON-RPC endpoints."""
    with split_cluster(
        f"failover_{request.param.replace('-', '_')}",
        rpc_transport=request.param,
        options={
            "DEFAULT": {"introspection_delay": str(DELAY)},
            "coordination": {
                "sweep_interval": "1",
                "leader_lease": str(LEASE),
                "claim_timeout": "5",
            },
        },
    ) as split:
        yield split


@pytest.fixture
def running(cluster: SplitCluster) -> SplitCluster:
    """Three live conductors (replacing any a previous test killed, under a
    new host id: the killed one's work must be found as lost)."""
    return ensure_conductors(cluster, 3, _spares)


def rows(db: sa.engine.Engine, uuids: list[str]) -> dict[str, Any]:
    with db.connect() as conn:
        result = conn.execute(
            sa.text(
                "SELECT uuid, state, owner, owner_run FROM introspections "
                "WHERE uuid = ANY(:uuids)"
            ),
            {"uuids": uuids},
        )
        return {r.uuid: r for r in result}


def leader(db: sa.engine.Engine) -> str | None:
    with db.connect() as conn:
        row = conn.execute(
            sa.text("SELECT holder, expires_at FROM leases WHERE name = 'leader'")
        ).first()
    return row.holder.split("/")[0] if row and row.holder else None


def by_host(cluster: SplitCluster, host: str) -> ConductorServer:
    return next(c for c in cluster.conductors if c.host == host)


def pending_owner(
    db: sa.engine.Engine, uuids: list[str], client: Client, lab: Lab
) -> tuple[str, str]:
    """A node owned by a conductor that sleeps until its power-on slot.

    Right after the first node is powered on, the others owned and still
    off are queued behind it, at least one power-on spacing away.
    """
    found: list[tuple[str, str]] = []

    def one() -> bool:
        power = {u: lab.api.node(u)["power_state"] for u in uuids}
        if "power on" not in power.values():
            return False
        for uuid, row in rows(db, uuids).items():
            if row.state == "starting" and row.owner and power[uuid] != "power on":
                found.append((uuid, row.owner))
                return True
        return False

    wait_until(one, 20, "a node to wait for its power-on slot")
    return found[0]


def no_broker(cluster: SplitCluster, server: str) -> None:
    if server == "rabbitmq" and cluster.rpc_transport == "json-rpc":
        pytest.skip("json-rpc: no broker runs, nothing to restart")


def start_all(client: Client, lab: Lab, count: int) -> list[str]:
    """Starts ``count`` new introspections without waiting for them."""
    uuids = [uuid for _machine, uuid in lab.machines(count)]
    for uuid in uuids:
        start(client, uuid)
    return uuids


def test_killed_owner_work_is_resumed_and_spacing_holds(
    running: SplitCluster, db: sa.engine.Engine, lab: Lab, ironic: IronicServer
) -> None:
    client = Client(running.url)
    access = AccessLog(ironic.log_file)
    uuids = start_all(client, lab, 4)
    uuid, host = pending_owner(db, uuids, client, lab)
    victim = by_host(running, host)
    killed_at = time.monotonic()
    kill(victim)

    powered: dict[str, float] = {}

    def all_on() -> bool:
        for each in uuids:
            if each not in powered and lab.api.node(each)["power_state"] == "power on":
                powered[each] = time.monotonic()
        return len(powered) == len(uuids)

    wait_until(all_on, 60, "every node to be powered on")
    body = client.wait_for(uuid, "waiting", timeout=30)
    assert body["error"] is None
    resumed_after = powered[uuid] - killed_at
    assert resumed_after < 30, resumed_after
    new_owner = [
        c.host
        for c in running.conductors
        if c.pid and f"Resuming the starting step of node {uuid}" in c.log_tail(10**6)
    ]
    assert new_owner and host not in new_owner, new_owner
    assert f"conductor {host} left the group" in " ".join(
        c.log_tail(10**6) for c in running.conductors if c.pid
    )
    # the spacing is between the power-on requests as Ironic got them (the
    # power state it shows lags by its answer time: seconds under load)
    sent = access.first_arrivals("PUT", "/states/power")
    times = sorted(sent[each] for each in uuids)
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert all(gap > DELAY - 0.6 for gap in gaps), gaps  # across conductors
    for each in uuids:
        client.post(f"/v1/introspection/{each}/abort")


def test_leader_moves_when_it_dies(running: SplitCluster, db: sa.engine.Engine) -> None:
    wait_until(lambda: leader(db) is not None, 10, "a leader")
    first = leader(db)
    assert first is not None
    kill(by_host(running, first))
    # within 2 * LEASE + 2 s, or the wait fails
    wait_until(
        lambda: leader(db) not in (None, first),
        2 * LEASE + 2,
        f"the leadership to move from {first}",
    )


def test_paused_owner_is_fenced_and_rejoins(
    running: SplitCluster, db: sa.engine.Engine, lab: Lab
) -> None:
    client = Client(running.url)
    uuids = start_all(client, lab, 3)
    uuid, host = pending_owner(db, uuids, client, lab)
    paused = by_host(running, host)
    paused.signal(signal.SIGSTOP)
    try:
        wait_until(
            lambda: (
                rows(db, [uuid])[uuid].owner not in (None, host)
                or rows(db, [uuid])[uuid].state != "starting"
            ),
            30,
            "another conductor to take the paused one's step over",
        )
        client.wait_for(uuid, "waiting", timeout=30)
    finally:
        paused.signal(signal.SIGCONT)
    # the woken conductor finds its step taken and drops it, untouched
    wait_until(
        lambda: (
            f"Node {uuid} changed while starting; dropping this work"
            in paused.log_tail(10**6)
        ),
        20,
        "the paused conductor to notice it lost the step",
    )
    assert client.get(f"/v1/introspection/{uuid}").json()["state"] == "waiting"
    assert f"Node {uuid} is booting" not in paused.log_tail(10**6)
    for each in uuids:
        client.post(f"/v1/introspection/{each}/abort")


def test_sigterm_drains_the_conductor(
    running: SplitCluster, db: sa.engine.Engine, lab: Lab, ironic: IronicServer
) -> None:
    """SIGTERM in the middle of 10 introspections (power-ons 3 s apart, so
    the conductors own starting steps that wait for their slots): the
    stopping conductor takes no new work but stays in the group, finishes
    the steps it owns, then leaves. Nobody resumes them, so Ironic sees one
    boot device and one power call per node: no node was driven by two
    conductors."""
    client = Client(running.url)
    calls = AccessLog(ironic.log_file)
    before = start_all(client, lab, 7)
    owners: collections.Counter[str] = collections.Counter()

    def busy() -> bool:
        power = {u: lab.api.node(u)["power_state"] for u in before}
        if "power on" not in power.values():
            return False
        owners.clear()
        owners.update(
            row.owner
            for uuid, row in rows(db, before).items()
            if row.state == "starting" and row.owner and power[uuid] != "power on"
        )
        return bool(owners)

    wait_until(busy, 20, "a conductor to own a step waiting for its slot")
    host, _count = owners.most_common(1)[0]
    owned = [
        u for u, row in rows(db, before).items()
        if row.owner == host and row.state == "starting"
    ]  # fmt: skip
    victim = by_host(running, host)
    signalled = time.monotonic()
    victim.signal(signal.SIGTERM)
    wait_until(
        lambda: f"Conductor {host} takes no more casts" in victim.log_tail(10**6),
        15,
        f"{host} to stop taking casts",
    )
    after = start_all(client, lab, 3)  # routed elsewhere
    victim.wait_exit(90)
    drained = time.monotonic() - signalled
    assert victim.stop() == 0
    for uuid in before + after:
        body = client.wait_for(uuid, "waiting", "error", timeout=60)
        assert body["state"] == "waiting", body
    logs = {c.host: c.log_tail(10**7) for c in running.conductors if c.pid}
    gone = victim.log_tail(10**7)
    logs[host] = gone
    for uuid in owned:  # finished by the stopping conductor itself
        assert f"Node {uuid} is booting into the introspection ramdisk" in gone
    for uuid in after:
        assert f"Node {uuid} is booting" not in gone, uuid
    assert f"Conductor {host} stops: it takes no new work" in gone
    assert "step(s) unfinished" not in gone
    for name, text in logs.items():
        for uuid in before + after:
            assert f"step of node {uuid} on" not in text, (name, uuid)  # resumed
            assert f"Node {uuid} changed while" not in text, (name, uuid)
    per_node = calls.per_node(before + after)
    for uuid in before + after:
        counts = per_node[uuid]
        assert counts["PUT /v1/nodes/<uuid>/management/boot_device"] == 1, counts
        assert counts["PUT /v1/nodes/<uuid>/states/power"] == 1, counts
    print(
        f"{running.rpc_transport}: SIGTERM with {len(owned)} of 10 steps owned "
        f"by {host}; it finished them and exited {drained:.1f} s after the "
        "signal; "
        "one boot device and one power call per node"
    )
    for each in before + after:
        client.post(f"/v1/introspection/{each}/abort")


def _introspect_soon(client: Client, lab: Lab, within: float) -> tuple[Node, float]:
    """Start one introspection, retrying 503s; seconds until it was taken."""
    node = lab.machine()
    return node, start(client, node[1], retry_for=within)


@pytest.mark.parametrize("server", ["rabbitmq", "etcd"])
def test_backend_restart_loses_nothing(
    running: SplitCluster, lab: Lab, server: str
) -> None:
    """Restart the broker or etcd with an introspection waiting for its
    ramdisk: it still finishes, and new work is taken within seconds."""
    no_broker(running, server)
    client = Client(running.url)
    (machine, waiting), _ = _introspect_soon(client, lab, 10)
    client.wait_for(waiting, "waiting", timeout=30)
    backend = running.rabbit if server == "rabbitmq" else running.etcd
    backend.stop()
    backend.start()
    restarted = time.monotonic()
    (_fresh, uuid), took = _introspect_soon(client, lab, 30)
    body = client.wait_for(uuid, "waiting", "error", timeout=60)
    assert body["state"] == "waiting", body
    recovered = time.monotonic() - restarted
    resp = client.post("/v1/continue", json=machine.payload())
    assert resp.status_code == 200, resp.text
    body = client.wait_for(waiting, "finished", "error", timeout=60)
    assert body["state"] == "finished", body
    print(
        f"{server} restart: new work accepted after {took:.1f} s, "
        f"reached waiting after {recovered:.1f} s"
    )
    client.post(f"/v1/introspection/{uuid}/abort")


@pytest.mark.parametrize("server", ["rabbitmq", "etcd", "postgresql"])
def test_outage_answers_503_fast_and_recovers(
    running: SplitCluster, lab: Lab, server: str
) -> None:
    """While a backend is down: reads keep working where they do not need
    it, a start answers within 5 s (never hangs): 503 when it cannot be
    recorded (database, or etcd for the node lock), accepted and run by the
    leader when only the broker is away; afterwards everything works again
    without restarting anything."""
    no_broker(running, server)
    client = Client(running.url)
    (machine, known), _ = _introspect_soon(client, lab, 10)
    client.wait_for(known, "waiting", timeout=30)
    _spare, uuid = lab.machine()
    postgres = running.postgres
    if server == "rabbitmq":
        running.rabbit.stop()
    elif server == "etcd":
        running.etcd.stop()
    else:
        postgres.pause()
    try:
        if server != "postgresql":
            assert client.get(f"/v1/introspection/{known}").status_code == 200
            assert client.get("/v1/introspection").status_code == 200
        else:
            resp = client.get(f"/v1/introspection/{known}")
            assert resp.status_code == 503, resp.text
            assert "database is unreachable" in resp.json()["error"]["message"]
            # the ramdisk's post: what failed, not where (the log has that)
            posted = client.post("/v1/continue", json=machine.payload())
            assert posted.status_code == 503, posted.text
            message = posted.json()["error"]["message"]
            assert message.startswith("Service temporarily unavailable: the database")
            for detail in ("127.0.0.1", str(postgres.port), "inspector@", "psycopg"):
                assert detail not in posted.text, posted.text
        failing = {
            "rabbitmq": "messaging",
            "etcd": "coordination",
            "postgresql": "database",
        }[server]
        started = time.monotonic()
        health = client.get("/healthcheck")
        assert health.status_code == 503, health.text
        assert f"{failing}: FAILED" in health.text.splitlines(), health.text
        for other in {"messaging", "coordination", "database"} - {failing}:
            # each backend is judged on its own: only the one down fails
            assert f"{other}: OK" in health.text.splitlines(), health.text
        assert time.monotonic() - started < 5  # bounded by check_timeout
        started = time.monotonic()
        resp = client.post(f"/v1/introspection/{uuid}")
        took = time.monotonic() - started
        assert took < 5, took
        if server == "rabbitmq":
            # the lock and the database answer: the start is recorded, and
            # the leader's sweep runs it on the leader, which needs no broker
            assert resp.status_code == 202, resp.text
            body = client.wait_for(uuid, "waiting", "error", timeout=30)
            assert body["state"] == "waiting", body
            print(
                f"{server} down: start accepted in {took:.2f} s, node waiting "
                f"after {time.monotonic() - started:.1f} s (leader's sweep)"
            )
        else:
            assert resp.status_code == 503, resp.text
            assert resp.headers["Retry-After"]
            print(
                f"{server} down: action answered 503 in {took:.2f} s: "
                f"{resp.json()['error']['message'][:120]}"
            )
    finally:
        if server == "rabbitmq":
            running.rabbit.start()
        elif server == "etcd":
            running.etcd.start()
        else:
            postgres.resume()
    (_machine, again), took = _introspect_soon(client, lab, 60)
    body = client.wait_for(again, "waiting", "error", timeout=60)
    assert body["state"] == "waiting", body
    print(f"{server} back: new work accepted after {took:.1f} s")
    assert client.get("/healthcheck").status_code == 200
    for each in (known, again, uuid):
        client.post(f"/v1/introspection/{each}/abort")


def test_status_check_reaches_every_backend(running: SplitCluster) -> None:
    """ironic-inspector-status connects to each backend: all green while
    they answer, and the one that is down named when it is not."""
    import json
    import subprocess
    import sys

    assert running.api is not None
    command = [
        f"{sys.prefix}/bin/ironic-inspector-status",
        "--config-file",
        str(running.api.config_file),
        "upgrade",
        "check",
        "--json",
    ]

    def check() -> tuple[int, dict[str, Any]]:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        checks = {c["check"]: c for c in json.loads(done.stdout)["checks"]}
        return done.returncode, checks

    code, checks = check()
    assert code == 0, checks
    if running.rpc_transport == "oslo":
        assert "answers" in checks["Message broker"]["details"]
    else:
        assert "no message broker" in checks["Message broker"]["details"]
        endpoints = checks["Conductor endpoints"]["details"]
        for conductor in running.conductors:
            port = conductor.options["json_rpc"]["port"]
            assert f"{conductor.host} http://127.0.0.1:{port}/: answers" in endpoints
    assert checks["Conductor endpoints"]["result"] == 0
    assert "conductor(s) in the group" in checks["Coordination backend"]["details"]
    running.etcd.stop()
    try:
        code, checks = check()
    finally:
        running.etcd.start()
    assert code == 2, checks
    assert checks["Coordination backend"]["result"] == 2
    assert "does not answer" in checks["Coordination backend"]["details"]
    assert checks["Message broker"]["result"] == 0
    if running.rpc_transport == "json-rpc":  # the group cannot be read
        assert checks["Conductor endpoints"]["result"] == 2
        assert (
            "cannot read the conductor group"
            in checks["Conductor endpoints"]["details"]
        )
