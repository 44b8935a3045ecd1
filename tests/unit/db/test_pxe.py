"""What the PXE filter reads from and reports to the database."""

import datetime

from inspector.db import engine, introspections, pxe, transitions
from inspector.db.models import utcnow

MAC = "AA:BB:CC:DD:EE:FF"


def test_booting_is_the_macs_of_running_introspections(db: engine.Database) -> None:
    assert pxe.booting(db) == (frozenset(), False)
    uuid = "11111111-2222-4333-8444-555555555555"
    introspections.start(db, uuid, True, {"mac": [MAC], "bmc_address": ["10.0.0.1"]})
    assert pxe.booting(db) == (frozenset({MAC.lower()}), True)
    transitions.failed(db, introspections.get(db, uuid), "x")
    assert pxe.booting(db) == (frozenset(), False)


def test_a_report_consumes_the_sync_asked_for(db: engine.Database) -> None:
    assert pxe.report(db, "dhcp-a", "dnsmasq", {"ok": True}) is False
    pxe.report(db, "dhcp-b", "noop", {})
    assert pxe.request_sync(db) == ["dhcp-a", "dhcp-b"]
    assert pxe.report(db, "dhcp-a", "dnsmasq", {"ok": False}) is True
    found = {row["host"]: row for row in pxe.filters(db)}
    assert list(found) == ["dhcp-a", "dhcp-b"]
    assert found["dhcp-a"]["status"] == {"ok": False}
    assert found["dhcp-a"]["sync_requested_at"] is None
    assert found["dhcp-b"]["sync_requested_at"] is not None
    assert 0 <= pxe.age(found["dhcp-a"]["heartbeat_at"]) < 60
    assert pxe.forget(db, "dhcp-b") and not pxe.forget(db, "dhcp-b")
    assert [row["host"] for row in pxe.filters(db)] == ["dhcp-a"]


def test_age_of_a_heartbeat() -> None:
    then = utcnow() - datetime.timedelta(seconds=90)
    assert 89 < pxe.age(then) < 120
