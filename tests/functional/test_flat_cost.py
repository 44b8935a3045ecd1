"""Cost per request does not grow with the fleet or the history.

Every request an operator or a ramdisk makes, and the conductor work it
sets off, is counted in Ironic calls and database statements at two sizes:
100 nodes in Ironic and 1,000 introspection records, then 10,000 nodes and
200,000 records (most finished). The counts are deterministic (no timings),
so they must be equal. The periodic tasks are paused: their cost is the
benchmark's (``make bench-scale``).
"""

import collections
import datetime
import pathlib
import threading
import uuid as uuidlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from oslo_config import cfg

from inspector import states
from inspector.db import engine, migration, models
from inspector.server import wiring
from tests.functional.conftest import Service, build_payload, random_mac
from tests.functional.fake_ironic import FakeIronic

PERIODIC_THREADS = {"cluster", "timeouts", "reconcile", "history"}
SIZES = {"small": (100, 1_000), "fleet": (10_000, 200_000)}
RULE = {
    "conditions": [{"op": "ge", "field": "memory_mb", "value": 1}],
    "actions": [{"action": "set-attribute", "path": "/extra/rule", "value": "hit"}],
}


def _seed(db: engine.Database, records: int) -> None:
    """``records`` introspections of nodes Ironic no longer has, nine in
    ten finished, the rest in error, started over the last months."""
    now = models.utcnow()
    rows = [
        {
            "uuid": str(uuidlib.UUID(int=index + 1, version=4)),
            "state": states.ERROR if index % 10 == 0 else states.FINISHED,
            "version": 3,
            "started_at": now - datetime.timedelta(minutes=index + 10),
            "finished_at": now - datetime.timedelta(minutes=index + 5),
            "manage_boot": True,
        }
        for index in range(records)
    ]
    with db.engine.begin() as conn:
        conn.execute(sa.insert(models.Introspection), rows)


class CountingIronic(FakeIronic):
    """Counts the items Ironic's listings hand back too: one listing call
    of the whole fleet would cost one call at any size."""

    def __init__(self) -> None:
        super().__init__()
        self.items_read = 0

    def list_ports(self, node_uuid: str) -> list[dict[str, Any]]:
        found = super().list_ports(node_uuid)
        self.items_read += len(found)
        return found

    def list_nodes_driver_info(self) -> list[dict[str, Any]]:
        found = super().list_nodes_driver_info()
        self.items_read += len(found)
        return found

    def list_node_uuids(self) -> set[str]:
        found = super().list_node_uuids()
        self.items_read += len(found)
        return found


class Counter:
    """Database statements by the request's thread and by conductor threads."""

    def __init__(self, db: engine.Database) -> None:
        self.by: collections.Counter[str] = collections.Counter()
        self._test_thread = threading.current_thread()
        sa.event.listen(db.engine, "before_cursor_execute", self._seen)

    def _seen(self, *_args: Any) -> None:
        thread = threading.current_thread()
        if thread is self._test_thread:
            self.by["api"] += 1
        elif thread.name not in PERIODIC_THREADS:
            self.by["conductor"] += 1


class Fleet:
    def __init__(self, service: Service, counter: Counter) -> None:
        self.service = service
        self.counter = counter

    def cost(
        self, request: Callable[[], Any], node: str | None = None, *wanted: str
    ) -> dict[str, int]:
        """Statements and Ironic calls of ``request`` and of the conductor
        work it sets off (until the node reaches ``wanted`` and the conductor
        has let go of it)."""
        ironic = self.service.ironic
        assert isinstance(ironic, CountingIronic)
        ironic.calls.clear()
        ironic.items_read = 0
        self.counter.by.clear()
        answer = request()
        assert answer.status_code < 300, answer.get_json()
        api = self.counter.by["api"]
        if node is not None and wanted:
            self.service.wait_for(node, *wanted)
            lock = self.service.rt.locks.get_lock(node)
            assert lock.acquire(timeout=10)
            lock.release()
        calls = collections.Counter(call for call, _ in ironic.calls)
        return {
            "api statements": api,
            "conductor statements": self.counter.by["conductor"],
            "ironic items listed": ironic.items_read,
            **{f"ironic {call}": count for call, count in sorted(calls.items())},
        }


@pytest.fixture
def fleet_factory(
    base_conf: cfg.ConfigOpts, conf: cfg.ConfigOpts, tmp_path: pathlib.Path
) -> Iterator[Callable[[int, int], Fleet]]:
    shapes: list[Any] = []
    conf.set_override("clean_up_period", 0)
    conf.set_override("sync_interval", 0, group="processing")

    def make(nodes: int, records: int) -> Fleet:
        # one at a time: they would share the in-process fake:// transport
        while shapes:
            shapes.pop().stop()
        db = engine.Database(f"sqlite:///{tmp_path}/{nodes}-{records}.sqlite")
        migration.upgrade(db)
        _seed(db, records)
        ironic = CountingIronic()
        for index in range(nodes):
            ironic.add_node(f"fleet-{index}", bmc=f"10.1.{index // 250}.{index % 250}")
        shape = wiring.standalone(base_conf, db=db, baremetal=ironic)
        shape.start()
        shapes.append(shape)
        service = Service(shape.rt, shape.conductor, ironic, shape.app.test_client())
        return Fleet(service, Counter(db))

    yield make
    for shape in shapes:
        shape.stop()


def _costs(fleet: Fleet) -> dict[str, dict[str, int]]:
    client = fleet.service.client
    ironic = fleet.service.ironic
    node = ironic.add_node("measured", bmc="192.0.2.10")
    uuid = node["uuid"]
    other = ironic.add_node("aborted", bmc="192.0.2.11")["uuid"]
    costs: dict[str, dict[str, int]] = {}

    costs["start"] = fleet.cost(
        lambda: client.post(f"/v1/introspection/{uuid}"), uuid, states.WAITING
    )
    costs["status"] = fleet.cost(lambda: client.get(f"/v1/introspection/{uuid}"))
    data = build_payload(random_mac(), "192.0.2.10")
    costs["continue"] = fleet.cost(
        lambda: client.post("/v1/continue", json=data), uuid, *states.FINAL
    )
    costs["reapply"] = fleet.cost(
        lambda: client.post(f"/v1/introspection/{uuid}/data/unprocessed"),
        uuid,
        *states.FINAL,
    )
    client.post(f"/v1/introspection/{other}")
    fleet.service.wait_for(other, states.WAITING)
    costs["abort"] = fleet.cost(
        lambda: client.post(f"/v1/introspection/{other}/abort"), other, states.ERROR
    )
    costs["list page"] = fleet.cost(lambda: client.get("/v1/introspection?limit=50"))
    costs["list page, state filter"] = fleet.cost(
        lambda: client.get("/v1/introspection?limit=50&state=finished,error")
    )
    rule: dict[str, Any] = {}

    def create() -> Any:
        resp = client.post("/v1/rules", json=RULE)
        rule.update(resp.get_json())
        return resp

    costs["rule create"] = fleet.cost(create)
    costs["rules list"] = fleet.cost(lambda: client.get("/v1/rules"))
    costs["rule delete"] = fleet.cost(
        lambda: client.delete(f"/v1/rules/{rule['uuid']}")
    )
    costs["conductors list"] = fleet.cost(
        lambda: client.get(
            "/v1/conductors",
            headers={"X-OpenStack-Ironic-Inspector-API-Version": "1.19"},
        )
    )
    return costs


def test_cost_per_request_is_the_same_at_fleet_scale(
    fleet_factory: Callable[[int, int], Fleet],
) -> None:
    small = _costs(fleet_factory(*SIZES["small"]))
    fleet = _costs(fleet_factory(*SIZES["fleet"]))
    # the counting works: the job's own calls are there
    assert small["start"]["ironic set_boot_device"] == 1
    assert small["continue"]["ironic patch_node"] == 1
    assert all(cost["api statements"] > 0 for cost in small.values()), small
    assert small == fleet
