"""GET /v1/pxe-filters (1.21) and ironic-inspector-manage pxe-filter: what
the filters reported, healthy or not, and sync requests reaching them."""

import datetime
import json
import pathlib
from typing import Any

import sqlalchemy as sa

from inspector.db import engine, migration, models, pxe
from tests.functional.conftest import Service, run_script

V121 = {"X-OpenStack-Ironic-Inspector-API-Version": "1.21"}
V120 = {"X-OpenStack-Ironic-Inspector-API-Version": "1.20"}


def status(**changes: Any) -> dict[str, Any]:
    base = {
        "driver": "dnsmasq",
        "generation": 4,
        "last_watch": 1_800_000_000.0,
        "last_sync": 1_800_000_000.0,
        "allowed": 2,
        "denied": 40,
        "unknown_allowed": True,
        "failing_closed": False,
        "dnsmasq_started": True,
    }
    return {**base, **changes}


def age_report(db: Any, host: str, seconds: float) -> None:
    with db.session() as session:
        row = session.get(models.PxeFilter, host)
        row.heartbeat_at = models.utcnow() - datetime.timedelta(seconds=seconds)


def test_the_view_says_who_is_healthy(service: Service) -> None:
    db = service.rt.db
    with db.session() as session:
        session.execute(sa.delete(models.PxeFilter))
    assert pxe.report(db, "dhcp-a", "dnsmasq", status()) is False
    pxe.report(db, "dhcp-b", "dnsmasq", status(failing_closed=True))
    pxe.report(db, "dhcp-c", "dnsmasq", status(dnsmasq_started=False))
    pxe.report(db, "dhcp-d", "dnsmasq", status())
    age_report(db, "dhcp-d", 60)
    assert service.client.get("/v1/pxe-filters", headers=V120).status_code == 404
    resp = service.client.get("/v1/pxe-filters", headers=V121)
    assert resp.status_code == 200, resp.get_json()
    views = {v["host"]: v for v in resp.get_json()["pxe_filters"]}
    assert sorted(views) == ["dhcp-a", "dhcp-b", "dhcp-c", "dhcp-d"]
    a = views["dhcp-a"]
    assert a["healthy"] is True and a["problems"] == []
    assert (a["allowed"], a["denied"], a["generation"]) == (2, 40, 4)
    assert a["last_sync"].startswith("2027-01-15T")
    assert a["report_lag"] < 5
    assert views["dhcp-b"]["problems"] == [
        "failing closed: the database or Ironic is not answering"
    ]
    assert views["dhcp-c"]["problems"] == ["dnsmasq not started: no complete sync yet"]
    assert views["dhcp-d"]["healthy"] is False
    assert views["dhcp-d"]["problems"][0].startswith("no report for 6")
    # the same, for Prometheus
    metrics = service.client.get("/metrics").get_data(as_text=True)
    prefix = "ironic_inspector_pxe_filter"
    assert f'{prefix}_healthy{{host="dhcp-a"}} 1.0' in metrics
    assert f'{prefix}_healthy{{host="dhcp-d"}} 0.0' in metrics
    assert f'{prefix}_failing_closed{{host="dhcp-b"}} 1.0' in metrics
    assert f'{prefix}_denied{{host="dhcp-a"}} 40.0' in metrics
    lag = next(
        line
        for line in metrics.splitlines()
        if line.startswith(f'{prefix}_report_lag_seconds{{host="dhcp-d"}}')
    )
    assert float(lag.split()[-1]) >= 60


def test_sync_requests_reach_the_filter_once(service: Service) -> None:
    db = service.rt.db
    pxe.report(db, "dhcp-s", "dnsmasq", status())
    assert pxe.request_sync(db, "dhcp-s") == ["dhcp-s"]
    assert pxe.request_sync(db, "nobody") == []
    assert pxe.report(db, "dhcp-s", "dnsmasq", status()) is True  # consumed
    assert pxe.report(db, "dhcp-s", "dnsmasq", status()) is False
    assert pxe.forget(db, "dhcp-s") and not pxe.forget(db, "dhcp-s")


def test_manage_lists_syncs_and_forgets(tmp_path: pathlib.Path) -> None:
    url = f"sqlite:///{tmp_path}/inspector.sqlite"
    db = engine.Database(url)
    migration.ensure_schema(db)
    pxe.report(db, "dhcp-1", "dnsmasq", status())
    conf = f"[database]\nconnection = {url}\n"

    def manage(*args: str) -> Any:
        return run_script(
            tmp_path, "ironic-inspector-manage", conf, "pxe-filter", *args
        )

    listed = manage("list", "--json")
    assert listed.returncode == 0, listed.stderr
    (only,) = json.loads(listed.stdout)
    assert only["host"] == "dhcp-1" and only["healthy"] is True
    table = manage("list")
    assert table.stdout.splitlines()[0].split()[:3] == ["host", "driver", "healthy"]
    assert "dhcp-1" in table.stdout
    synced = manage("sync")
    assert synced.returncode == 0, synced.stderr
    assert "Repair sync requested of dhcp-1" in synced.stdout
    assert pxe.report(db, "dhcp-1", "dnsmasq", status()) is True
    missing = manage("sync", "dhcp-9")
    assert (
        missing.returncode == 1 and "PXE filter dhcp-9 was not found" in missing.stderr
    )
    age_report(db, "dhcp-1", 60)
    assert manage("list").returncode == 1  # an unhealthy filter: exit 1
    assert manage("forget", "dhcp-1").returncode == 0
    assert json.loads(manage("list", "--json").stdout) == []
