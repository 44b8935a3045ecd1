"""The fleet's findings and the follower's last poll as /metrics gauges:
counted from the fleet view as its endpoints count them, kept while
nothing changed, and the follower's only when it is enabled."""

import datetime
import pathlib
import uuid as uuidlib
from typing import Any

import pytest
import sqlalchemy as sa
from oslo_config import cfg

from inspector import exceptions
from inspector.api import fleet as fleet_api
from inspector.api import fleet_metrics
from inspector.db import data_store, engine, fleet, followed, models
from inspector.locking.semaphore import SemaphoreLockProvider
from inspector.runtime import Runtime
from lab.machines import fleet_rows
from tests.unit.db.statements import recorded

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture
def rt(conf: cfg.ConfigOpts, db: engine.Database) -> Runtime:
    return Runtime(
        conf=conf,
        db=db,
        baremetal=None,  # type: ignore[arg-type]
        locks=SemaphoreLockProvider(),
        stores=data_store.DataStores(conf, db),
    )


def scrape(collector: fleet_metrics.FleetCollector) -> Samples:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in collector.collect()
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((f"ironic_inspector_{name}", tuple(sorted(labels.items()))))


def families(collector: fleet_metrics.FleetCollector) -> list[str]:
    return [family.name for family in collector.collect()]


def _node(
    db: engine.Database,
    name: str,
    *,
    memory_mb: int = 262144,
    links: list[dict[str, Any]] | None = None,
    ago: datetime.timedelta = datetime.timedelta(hours=1),
    changed: bool = False,
    node: str | None = None,
) -> str:
    """A node of one product (its run ended ``ago``; with a change or not)."""
    node = node or str(uuidlib.uuid4())
    record = fleet_rows.machine(product="Metrics R1", memory_mb=memory_mb)
    changes = [fleet_rows.change("memory", "changed", "total_mb", 1, 2)]
    row = fleet_rows.run_row(
        node,
        record,
        name=name,
        links=links or [],
        finished_at=models.utcnow() - ago,
        changes=changes if changed else [],
    )
    fleet_rows.insert(db, [row])
    return node


def _mac(index: int) -> str:
    return f"52:54:00:00:00:{index:02x}"


def _fleet(db: engine.Database) -> list[str]:
    """Eight peers: two with less memory (2 outliers on memory_mb); two
    NICs of different nodes on one switch port (1 duplicate-port); a PXE
    NIC without LLDP (1 no-neighbour)."""
    nodes = []
    for index in range(8):
        nic = fleet_rows.nic(
            _mac(index), "eth0", switch_id="sw-1", port_id=f"p{index}", pxe=True
        )
        if index == 1:  # on node 0's port
            nic = fleet_rows.nic(_mac(index), "eth0", switch_id="sw-1", port_id="p0")
        if index == 2:
            nic = fleet_rows.nic(_mac(index), "eth0", pxe=True)
        memory = 131072 if index in (3, 4) else 262144
        nodes.append(_node(db, f"node-{index}", memory_mb=memory, links=[nic]))
    return nodes


def test_findings_are_those_of_the_endpoints(rt: Runtime) -> None:
    _fleet(rt.db)
    samples = scrape(fleet_metrics.FleetCollector(rt))

    assert value(samples, "fleet_nodes_with_record") == 8
    assert value(samples, "fleet_outliers", fact="memory_mb") == 2
    # every fact compared among peers is answered, 0 when none
    assert value(samples, "fleet_outliers", fact="bios_version") == 0
    assert value(samples, "fleet_outliers", fact="product") is None  # a peer fact
    assert value(samples, "fleet_cabling_problems", kind="duplicate-port") == 1
    assert value(samples, "fleet_cabling_problems", kind="no-neighbour") == 1
    assert value(samples, "fleet_cabling_problems", kind="unexpected") == 0
    outliers = fleet_api.find_outliers(rt)
    assert sum(1 for o in outliers if o["fact"] == "memory_mb") == 2


def test_unexpected_cabling_counts_against_the_file(
    rt: Runtime, tmp_path: pathlib.Path
) -> None:
    _fleet(rt.db)
    rules = tmp_path / "cabling.csv"
    rules.write_text("node-5, eth0, sw-1, p9\nnode-6, eth0, sw-1, p6\n")
    rt.conf.set_override("expected_cabling", str(rules), group="inventory")

    samples = scrape(fleet_metrics.FleetCollector(rt))

    assert value(samples, "fleet_cabling_problems", kind="unexpected") == 1


def test_unreadable_cabling_leaves_only_its_gauge_out(
    rt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fleet(rt.db)

    def malformed(_rt: Runtime) -> None:
        raise exceptions.ConfigError("[inventory]expected_cabling: line 1: bad")

    monkeypatch.setattr(fleet_api, "cabling_rules", malformed)
    collector = fleet_metrics.FleetCollector(rt)

    assert "ironic_inspector_fleet_cabling_problems" not in families(collector)
    assert value(scrape(collector), "fleet_outliers", fact="memory_mb") == 2


def test_a_scrape_with_nothing_new_costs_one_statement(
    rt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    nodes = _fleet(rt.db)
    calls: list[int] = []
    find = fleet_api.find_outliers

    def counted(rt: Runtime) -> list[dict[str, Any]]:
        calls.append(1)
        return find(rt)

    monkeypatch.setattr(fleet_api, "find_outliers", counted)
    collector = fleet_metrics.FleetCollector(rt)
    first = scrape(collector)
    statements = recorded(rt.db)

    assert scrape(collector) == first
    assert statements == ["SELECT"]  # the fleet view's fingerprint
    assert len(calls) == 1

    # node-3 has its peers' memory now: one outlier left
    _node(rt.db, "node-3", node=nodes[3], changed=True, ago=datetime.timedelta())
    after = scrape(collector)

    assert len(calls) == 2
    assert value(after, "fleet_nodes_with_record") == 8
    assert value(after, "fleet_outliers", fact="memory_mb") == 1
    assert value(after, "fleet_nodes_changed_last_day") == 1


def test_nodes_changed_in_the_last_day(
    rt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    hours = datetime.timedelta(hours=1)
    a = _node(rt.db, "a", changed=True, ago=2 * hours)
    _node(rt.db, "a", node=a, changed=True, ago=23 * hours)  # counted once
    _node(rt.db, "b", changed=True, ago=20 * hours)
    _node(rt.db, "c", ago=hours)  # no change
    _node(rt.db, "d", changed=True, ago=30 * hours)  # too old
    collector = fleet_metrics.FleetCollector(rt)

    assert value(scrape(collector), "fleet_nodes_changed_last_day") == 2
    assert fleet.nodes_changed_since(rt.db, models.utcnow() - 24 * hours)[0] == 2

    # an hour on: nobody left the window, the count is kept
    now = models.utcnow()
    monkeypatch.setattr(fleet_metrics, "utcnow", lambda: now + hours)
    statements = recorded(rt.db)
    assert value(scrape(collector), "fleet_nodes_changed_last_day") == 2
    assert statements == ["SELECT"]
    # b's change is a day old: counted again, though the view is the same
    monkeypatch.setattr(fleet_metrics, "utcnow", lambda: now + 5 * hours)
    assert value(scrape(collector), "fleet_nodes_changed_last_day") == 1
    monkeypatch.setattr(fleet_metrics, "utcnow", lambda: now + 23 * hours)
    assert value(scrape(collector), "fleet_nodes_changed_last_day") == 0


def test_the_changed_nodes_are_read_through_the_finish_index(
    db: engine.Database,
) -> None:
    """The runs of the last day, never the whole history (grouped by node
    in SQL, SQLite would walk the node index)."""
    seen: list[tuple[str, Any]] = []
    sa.event.listen(
        db.engine,
        "before_cursor_execute",
        lambda _c, _cur, statement, params, *_a: seen.append((statement, params)),
    )
    fleet.nodes_changed_since(db, models.utcnow())
    [(statement, params)] = seen
    with db.connect() as conn:
        plan = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", params).all()
    assert [row[-1] for row in plan] == [
        "SEARCH hardware_runs USING INDEX hardware_runs_finished_idx (finished_at>?)"
    ]


FOLLOW = [
    "ironic_inspector_ironic_follow_last_poll_timestamp_seconds",
    "ironic_inspector_ironic_follow_lag_seconds",
    "ironic_inspector_ironic_follow_last_poll_failed",
    "ironic_inspector_ironic_follow_nodes",
]


def test_the_follower_is_left_out_unless_enabled(rt: Runtime) -> None:
    followed.note_poll(rt.db, "c1", lag=3.0)
    collector = fleet_metrics.FleetCollector(rt)

    assert not set(FOLLOW) & set(families(collector))
    rt.conf.set_override("enabled", True, group="ironic_follow")
    assert set(FOLLOW) <= set(families(collector))


def _polled_at(db: engine.Database) -> float:
    state = followed.poll_state(db)
    assert state is not None and state.polled_at is not None
    return state.polled_at.replace(tzinfo=datetime.UTC).timestamp()


def test_the_followers_last_poll(rt: Runtime) -> None:
    rt.conf.set_override("enabled", True, group="ironic_follow")
    collector = fleet_metrics.FleetCollector(rt)

    never = scrape(collector)
    assert value(never, "ironic_follow_last_poll_timestamp_seconds") == 0
    assert value(never, "ironic_follow_lag_seconds") is None  # not known yet
    assert value(never, "ironic_follow_last_poll_failed") == 0
    assert value(never, "ironic_follow_nodes") == 0

    finished = models.utcnow()
    for uuid in ("a1", "b2"):
        followed.skip(rt.db, followed.Inspection(uuid, None, finished))
    followed.note_poll(rt.db, "c1", lag=12.5)
    polled = scrape(collector)
    polled_at = _polled_at(rt.db)
    assert value(polled, "ironic_follow_last_poll_timestamp_seconds") == polled_at
    assert abs(polled_at - datetime.datetime.now(datetime.UTC).timestamp()) < 60
    assert value(polled, "ironic_follow_lag_seconds") == 12.5
    assert value(polled, "ironic_follow_last_poll_failed") == 0
    assert value(polled, "ironic_follow_nodes") == 2

    followed.note_poll(rt.db, "c1", error="Ironic is unreachable or failing: 503")
    failed = scrape(collector)
    assert value(failed, "ironic_follow_last_poll_failed") == 1
    # the last poll that ended, and its lag, stay
    assert value(failed, "ironic_follow_last_poll_timestamp_seconds") == polled_at
    assert value(failed, "ironic_follow_lag_seconds") == 12.5

    followed.note_poll(rt.db, "c2", lag=0.0)
    again = scrape(collector)
    assert value(again, "ironic_follow_last_poll_failed") == 0
    assert value(again, "ironic_follow_lag_seconds") == 0
    assert value(again, "ironic_follow_last_poll_timestamp_seconds") == _polled_at(
        rt.db
    )
