"""What the split shape costs besides the machines' work: a node lock and
the member list in the coordination backend, a lock handed from one
conductor to another, one cast as the API waits for it, and the database
connections its pools open."""

import concurrent.futures
import contextlib
import pathlib
import statistics
import time
from typing import Any

from lab.bench.stats import percentile

THREADS = 8
"""API threads casting at once in the burst measurement."""


def coordination_costs(backend_url: str, rounds: int = 200) -> dict[str, Any]:
    """etcd lock acquire+release and member listing, as the services do them."""
    from tooz import coordination

    from inspector.coordination import etcd_session
    from inspector.coordination.backend import GROUP_ID, direct_access
    from inspector.coordination.members import GroupMembers
    from inspector.locking import factory

    coordinator = coordination.get_coordinator(backend_url, b"bench")
    _, client = direct_access(coordinator)
    if client is not None:  # as the services do
        etcd_session.install(client)
    coordinator.start()
    locks = factory.for_coordinator(coordinator)  # the services' own locks
    try:
        lock_ms = []
        for index in range(rounds):
            node_lock = locks.get_lock(f"bench-{index}")
            started = time.perf_counter()
            node_lock.acquire(blocking=False)
            node_lock.release()
            lock_ms.append((time.perf_counter() - started) * 1000)
        members = GroupMembers(coordinator, ttl=2.0)
        uncached, cached = [], []
        for _ in range(rounds):
            started = time.perf_counter()
            coordinator.get_members(GROUP_ID).get()
            uncached.append((time.perf_counter() - started) * 1000)
        members.pick()
        for _ in range(rounds):
            started = time.perf_counter()
            members.pick()
            cached.append((time.perf_counter() - started) * 1000)
        handoff = lock_handoff_ms(backend_url)
    finally:
        locks.stop()
        coordinator.stop()
    return {
        "lock_handoff_ms": {
            "p50": statistics.median(handoff),
            "max": max(handoff),
        },
        "lock_acquire_release_ms": {
            "p50": statistics.median(lock_ms),
            "p99": percentile(lock_ms, 99),
        },
        "get_members_ms": {
            "p50": statistics.median(uncached),
            "p99": percentile(uncached, 99),
        },
        "pick_conductor_cached_ms": {
            "p50": statistics.median(cached),
            "p99": percentile(cached, 99),
        },
    }


def cast_costs(config_file: pathlib.Path, rounds: int = 300) -> dict[str, Any]:
    """How long the API waits for one cast, measured with the API's own
    client built from its configuration: RabbitMQ returns once the broker
    has the message; JSON-RPC once the conductor has looked the step up
    (an unknown node here, so nothing else runs)."""
    import uuid as uuid_lib

    from oslo_config import cfg

    from inspector import bootstrap
    from inspector.server import wiring

    # the global CONF, as the services: oslo.messaging registers some of its
    # options there only; cleared first, as an earlier shape parsed it
    cfg.CONF.clear()
    conf = bootstrap.parse_config(["--config-file", str(config_file)])
    service = wiring.api(conf)
    try:
        rpc = service.runtime.rpc
        assert rpc is not None
        rpc.process(str(uuid_lib.uuid4()), 1)  # connections open
        took = []
        for _ in range(rounds):
            uuid = str(uuid_lib.uuid4())
            started = time.perf_counter()
            rpc.process(uuid, 1)
            took.append((time.perf_counter() - started) * 1000)
        # many API threads at once, as under a burst of ramdisks
        burst = rounds * 4
        started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
            list(
                pool.map(lambda _i: rpc.process(str(uuid_lib.uuid4()), 1), range(burst))
            )
        per_s = burst / (time.perf_counter() - started)
    finally:
        service.stop()
    return {
        "casts": rounds,
        "p50_ms": round(statistics.median(took), 2),
        "p99_ms": round(percentile(took, 99), 2),
        f"casts_per_s_{THREADS}_threads": round(per_s),
    }


def lock_handoff_ms(backend_url: str, rounds: int = 10) -> list[float]:
    """Time from one process releasing a node lock to another, blocked on
    it, holding it (two coordinators, as two conductors would be), through
    the services' own lock class."""
    import threading

    from tooz import coordination

    from inspector.locking.factory import for_coordinator

    holder = coordination.get_coordinator(backend_url, b"bench-holder")
    waiter = coordination.get_coordinator(backend_url, b"bench-waiter")
    holder.start()
    waiter.start()
    holder_locks, waiter_locks = for_coordinator(holder), for_coordinator(waiter)
    results = []
    try:
        for index in range(rounds):
            name = f"handoff-{index}"
            held = holder_locks.get_lock(name)
            held.acquire()
            got = threading.Event()
            acquired_at = [0.0]

            def wait_for_it(
                lock_name: str, stamp: list[float], done: threading.Event
            ) -> None:
                lock = waiter_locks.get_lock(lock_name)
                lock.acquire(blocking=True)
                stamp[0] = time.perf_counter()
                done.set()
                lock.release()

            thread = threading.Thread(target=wait_for_it, args=(name, acquired_at, got))
            thread.start()
            time.sleep(0.3)  # the waiter is blocked by now
            released_at = time.perf_counter()
            held.release()
            got.wait(30)
            thread.join(30)
            results.append((acquired_at[0] - released_at) * 1000)
    finally:
        holder_locks.stop()
        waiter_locks.stop()
        holder.stop()
        waiter.stop()
    return results


def database_sessions(url: str) -> int | None:
    """Connections PostgreSQL has accepted into the database of ``url`` so
    far (``pg_stat_database.sessions``): during a run, the connections the
    services' pools opened (each a TCP handshake, an authentication and a
    server process)."""
    import psycopg2

    name = url.rsplit("/", 1)[1]
    dsn = url.replace("postgresql+psycopg2://", "postgresql://")
    with contextlib.closing(psycopg2.connect(dsn)) as conn, conn.cursor() as cur:
        cur.execute("SELECT sessions FROM pg_stat_database WHERE datname = %s", (name,))
        row = cur.fetchone()
    return None if row is None else int(row[0])
