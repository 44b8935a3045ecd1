"""/metrics: the fleet's findings and the follower's last poll, through
the real app over a database of their own (the session's is shared, its
counts are every test's), the follower polling a fake Ironic node list."""

import dataclasses
import datetime
import pathlib
import time
import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient
from oslo_config import cfg
from prometheus_client import parser

from inspector import exceptions
from inspector.api.app import create_app
from inspector.db import engine, followed, migration, models
from inspector.follow.poller import Follower
from inspector.runtime import ApiRuntime
from lab.machines import fleet_rows
from tests.functional.conftest import Service
from tests.unit.follow.conftest import FakeIronic


@dataclasses.dataclass
class Own:
    """The app over a database of its own, and its runtime."""

    client: FlaskClient
    rt: ApiRuntime

    def metrics(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        resp = self.client.get("/metrics")
        assert resp.status_code == 200, resp.get_data(as_text=True)
        return {
            (sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in parser.text_string_to_metric_families(
                resp.get_data(as_text=True)
            )
            for sample in family.samples
        }

    def metric(self, name: str, **labels: str) -> float | None:
        return self.metrics().get(
            (f"ironic_inspector_{name}", tuple(sorted(labels.items())))
        )


@pytest.fixture
def own(
    service: Service, conf: cfg.ConfigOpts, tmp_path: pathlib.Path
) -> Iterator[Own]:
    db = engine.Database(f"sqlite:///{tmp_path}/metrics.sqlite")
    migration.upgrade(db)
    rt = dataclasses.replace(service.rt, db=db)
    yield Own(create_app(rt).test_client(), rt)
    db.dispose()


def _runs(count: int, **odd: Any) -> list[dict[str, Any]]:
    """``count`` nodes of one product on ports p0, p1, ... of one switch,
    their runs ended an hour ago; ``odd`` facts for the first two."""
    rows = []
    for index in range(count):
        mac = f"52:54:00:00:01:{index:02x}"
        nic = fleet_rows.nic(mac, "eth0", switch_id="sw-1", port_id=f"p{index}")
        record = fleet_rows.machine(product="Metrics F1", **(odd if index < 2 else {}))
        rows.append(
            fleet_rows.run_row(
                str(uuidlib.uuid4()),
                record,
                name=f"metrics-{index}",
                links=[nic],
                finished_at=models.utcnow() - datetime.timedelta(hours=1),
            )
        )
    return rows


def test_metrics_count_the_fleets_findings(own: Own) -> None:
    assert own.metric("fleet_nodes_with_record") == 0
    assert own.metric("fleet_outliers", fact="bios_version") == 0
    rows = _runs(8, bios_version="0.9.1")
    fleet_rows.insert(own.rt.db, rows)

    assert own.metric("fleet_nodes_with_record") == 8
    assert own.metric("fleet_outliers", fact="bios_version") == 2
    assert own.metric("fleet_outliers", fact="memory_mb") == 0
    assert own.metric("fleet_cabling_problems", kind="duplicate-port") == 0
    assert own.metric("fleet_nodes_changed_last_day") == 0
    # the page's answer, which the gauges are counted from too
    outliers = own.client.get(
        "/v1/inventory/outliers",
        headers={"X-OpenStack-Ironic-Inspector-API-Version": "1.23"},
    ).get_json()["outliers"]
    assert sorted(o["uuid"] for o in outliers) == sorted(
        r["node_uuid"] for r in rows[:2]
    )

    # one of them updated to its peers' BIOS, found on node 2's port
    nic = fleet_rows.nic("52:54:00:00:01:00", "eth0", switch_id="sw-1", port_id="p2")
    update = fleet_rows.run_row(
        rows[0]["node_uuid"],
        fleet_rows.machine(product="Metrics F1"),
        name="metrics-0",
        links=[nic],
        changes=[fleet_rows.change("system", "changed", "bios_version", "0.9.1", "1")],
    )
    fleet_rows.insert(own.rt.db, [update])

    assert own.metric("fleet_nodes_with_record") == 8
    assert own.metric("fleet_outliers", fact="bios_version") == 1
    assert own.metric("fleet_cabling_problems", kind="duplicate-port") == 1
    assert own.metric("fleet_nodes_changed_last_day") == 1


def test_metrics_show_the_followers_last_poll(own: Own, conf: cfg.ConfigOpts) -> None:
    assert own.metric("ironic_follow_nodes") is None  # not following
    conf.set_override("enabled", True, group="ironic_follow")
    ironic = FakeIronic()
    for index in range(2):
        ironic.add(str(uuidlib.uuid4()), 10 + index, name=f"followed-{index}")
    follower = Follower(
        dataclasses.replace(own.rt, baremetal=ironic)  # type: ignore[arg-type]
    )
    assert own.metric("ironic_follow_last_poll_timestamp_seconds") == 0

    before = time.time()
    assert follower.poll() is not None
    state = followed.poll_state(own.rt.db)
    assert state is not None and state.polled_at is not None
    polled_at = state.polled_at.replace(tzinfo=datetime.UTC).timestamp()
    assert before - 1 <= polled_at <= time.time() + 1
    assert own.metric("ironic_follow_last_poll_timestamp_seconds") == polled_at
    assert own.metric("ironic_follow_last_poll_failed") == 0
    assert own.metric("ironic_follow_lag_seconds") == 0
    assert own.metric("ironic_follow_nodes") == 2
    assert own.metric("fleet_nodes_with_record") == 2  # in the fleet view

    failure = exceptions.BaremetalError("Ironic answered 503")
    ironic.fail.update(inspected_node=failure, inspected_page=failure)
    assert follower.poll() is None
    assert own.metric("ironic_follow_last_poll_failed") == 1
    assert own.metric("ironic_follow_last_poll_timestamp_seconds") == polled_at

    ironic.fail.clear()
    assert follower.poll() is not None
    assert own.metric("ironic_follow_last_poll_failed") == 0
    latest = own.metric("ironic_follow_last_poll_timestamp_seconds")
    assert latest is not None and latest >= polled_at
