"""The follower's polls against a fake Ironic node list: each inspection
of Ironic's recorded once, in order, across restarts and equal times; the
marker poll's one short query; each fault stopping or skipping as the
module says, with nothing lost."""

import json
import logging
from typing import Any

import pytest

from inspector import exceptions, states
from inspector.db import followed, hardware_runs, introspections
from inspector.follow import observe
from inspector.follow.poller import Follower, inspection_of
from inspector.runtime import Runtime
from tests.unit.follow.conftest import DATA, T0, FakeIronic

A = "aaaaaaaa-0000-4000-8000-000000000001"
B = "bbbbbbbb-0000-4000-8000-000000000002"
C = "cccccccc-0000-4000-8000-000000000003"
D = "dddddddd-0000-4000-8000-000000000004"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def runs(rt: Runtime, node: str) -> list[hardware_runs.HistoryEntry]:
    return hardware_runs.history(rt.db, node, limit=100)


def post() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DATA.read_text())
    return data


def test_first_poll_records_every_inspected_node_once(
    rt: Runtime, ironic: FakeIronic
) -> None:
    ironic.add(A, 10, name="rack1-a")
    ironic.add(B, 20, interface="redfish")
    ironic.add(C)  # never inspected
    ironic.add(D, 5, interface="inspector")  # inspected through us: ours
    follower = Follower(rt, Clock())

    report = follower.poll()

    assert report is not None and report.full
    assert report.recorded == 2
    assert [(e.source, e.interface) for e in runs(rt, A)] == [("ironic", "agent")]
    assert [(e.source, e.interface) for e in runs(rt, B)] == [("ironic", "redfish")]
    assert runs(rt, C) == [] and runs(rt, D) == []
    status = introspections.get(rt.db, A)
    assert status.state == states.FINISHED
    assert status.hardware_run == runs(rt, A)[0].uuid
    assert status.finished_at is not None and status.finished_at.second == 10
    # ours never read (the order of the records: test_read_ahead.py)
    inventories = [arg for m, arg in ironic.calls if m == "get_inventory"]
    assert sorted(inventories) == [A, B]


def test_nothing_new_costs_one_short_query(rt: Runtime, ironic: FakeIronic) -> None:
    for number, uuid in enumerate((A, B, C, D)):
        ironic.add(uuid, 10 + number)
    follower = Follower(rt, Clock())
    follower.poll()
    ironic.calls.clear()

    report = follower.poll()

    assert report is not None and not report.full and report.recorded == 0
    # the marker (the newest recorded) checked, then one page after it
    assert ironic.calls == [("inspected_node", D), ("inspected_page", (D, True))]


def test_a_new_inspection_is_a_new_run_compared_with_the_last(
    rt: Runtime, ironic: FakeIronic
) -> None:
    ironic.add(A, 10)
    ironic.add(B, 20)
    follower = Follower(rt, Clock())
    follower.poll()
    changed = post()
    changed["inventory"]["disks"][0]["serial"] = "REPLACED-DISK-1"
    ironic.inspect(A, 100, changed)

    report = follower.poll()

    assert report is not None and not report.full and report.recorded == 1
    history = runs(rt, A)
    assert len(history) == 2 and history[0].changes > 0
    record = hardware_runs.get_record(rt.db, history[0].uuid)
    assert record is not None
    assert introspections.get(rt.db, A).hardware_run == history[0].uuid
    changes, _next = hardware_runs.changes(rt.db, A, limit=10)
    kinds = {(c["component"], c["kind"]) for c in changes}
    assert ("disk:REPLACED-DISK-1", "added") in kinds, changes


def test_equal_finish_times_are_all_recorded(rt: Runtime, ironic: FakeIronic) -> None:
    ironic.add(A, 10)
    follower = Follower(rt, Clock())
    follower.poll()
    for uuid in (B, C, D):
        ironic.add(uuid, 50)  # one bulk inspection: the same second

    report = follower.poll()

    assert report is not None and report.recorded == 3
    assert all(len(runs(rt, uuid)) == 1 for uuid in (B, C, D))


def test_a_restart_or_new_leader_records_nothing_twice(
    rt: Runtime, ironic: FakeIronic
) -> None:
    for number, uuid in enumerate((A, B, C)):
        ironic.add(uuid, 10 + number)
    Follower(rt, Clock()).poll()
    ironic.inspect(D := A, 90)  # finished while the service was down
    del D

    restarted = Follower(rt, Clock())
    report = restarted.poll()

    assert report is not None and report.full and report.recorded == 1
    assert len(runs(rt, A)) == 2 and len(runs(rt, B)) == 1 and len(runs(rt, C)) == 1
    assert restarted.poll().recorded == 0  # type: ignore[union-attr]


def test_ironic_away_stops_the_poll_and_the_next_resumes(
    rt: Runtime, ironic: FakeIronic, caplog: pytest.LogCaptureFixture
) -> None:
    ironic.add(A, 10)
    ironic.add(B, 20)
    ironic.add(C, 30)
    ironic.fail_on["get_inventory"] = B
    follower = Follower(rt, Clock())

    assert follower.poll() is None
    assert len(runs(rt, A)) == 1 and runs(rt, B) == [] and runs(rt, C) == []
    assert "Ironic is unreachable or failing" in caplog.text

    ironic.fail_on.clear()
    report = follower.poll()  # the whole scan again: the first did not end

    assert report is not None and report.full and report.recorded == 2
    assert len(runs(rt, B)) == 1 and len(runs(rt, C)) == 1

    ironic.inspect(B, 100)
    ironic.inspect(C, 110)
    ironic.fail_on["get_inventory"] = B
    assert follower.poll() is None  # a marker poll, stopped at B
    assert len(runs(rt, B)) == 1 and len(runs(rt, C)) == 1  # C not before B
    ironic.fail_on.clear()
    report = follower.poll()
    assert report is not None and not report.full and report.recorded == 2
    assert len(runs(rt, B)) == 2 and len(runs(rt, C)) == 2


def test_a_deleted_node_is_skipped_once_with_a_log_line(
    rt: Runtime, ironic: FakeIronic, caplog: pytest.LogCaptureFixture
) -> None:
    ironic.add(A, 10)
    ironic.add(B, 20)
    real = ironic.get_inventory

    def deleted_meanwhile(uuid: str) -> dict[str, Any]:
        if uuid == A:
            del ironic.nodes[A]
        return real(uuid)

    ironic.get_inventory = deleted_meanwhile  # type: ignore[method-assign,assignment]
    follower = Follower(rt, Clock())
    with caplog.at_level(logging.WARNING):
        report = follower.poll()

    assert report is not None and report.recorded == 1 and report.skipped == 1
    assert f"Node {A} (no name) was deleted from Ironic" in caplog.text
    assert runs(rt, A) == [] and len(runs(rt, B)) == 1


def test_no_inventory_names_ironics_option(
    rt: Runtime, ironic: FakeIronic, caplog: pytest.LogCaptureFixture
) -> None:
    ironic.add(A, 10)
    del ironic.inventories[A]
    follower = Follower(rt, Clock())

    report = follower.poll()

    assert report is not None and report.skipped == 1
    assert "[inventory]data_backend" in caplog.text
    caplog.clear()
    assert follower.poll().skipped == 0  # type: ignore[union-attr]
    assert "data_backend" not in caplog.text  # said once per inspection


def test_a_huge_or_foreign_inventory_is_skipped(
    rt: Runtime, ironic: FakeIronic, caplog: pytest.LogCaptureFixture
) -> None:
    rt.conf.set_override("max_inventory_size", 4096, group="ironic_follow")
    ironic.add(A, 10)  # the test post is larger than 4 KiB
    ironic.add(B, 20)
    ironic.inventories[B] = {"inventory": {"hello": "world"}, "plugin_data": {}}
    ironic.add(C, 30)
    ironic.inventories[C] = {"inventory": {"memory": {"physical_mb": 1024}}}

    report = Follower(rt, Clock()).poll()

    assert report is not None and report.recorded == 1 and report.skipped == 2
    assert "more than [ironic_follow]max_inventory_size (4096)" in caplog.text
    assert "not an ironic-python-agent inventory" in caplog.text
    assert len(runs(rt, C)) == 1


def test_a_policy_refusal_names_the_policy(
    rt: Runtime, ironic: FakeIronic, caplog: pytest.LogCaptureFixture
) -> None:
    ironic.add(A, 10)
    ironic.fail["get_inventory"] = exceptions.BaremetalForbidden(
        "Ironic's policy refused the request"
    )

    assert Follower(rt, Clock()).poll() is None
    assert "baremetal:node:inventory:get" in caplog.text
    assert followed.count(rt.db) == 0  # not skipped: it may pass


def test_an_old_ironic_is_refused_once(
    rt: Runtime, ironic: FakeIronic, caplog: pytest.LogCaptureFixture
) -> None:
    ironic.version = "1.80"
    ironic.add(A, 10)
    follower = Follower(rt, Clock())

    assert follower.poll() is None
    assert follower.refused is not None and "needs 1.81" in follower.refused
    ironic.calls.clear()
    assert follower.poll() is None
    assert ironic.calls == []  # refused: Ironic is not asked again


def test_a_moved_marker_falls_back_to_the_next_then_a_whole_scan(
    rt: Runtime, ironic: FakeIronic
) -> None:
    ironic.add(A, 10)
    ironic.add(B, 20)
    ironic.add(C, 30)
    follower = Follower(rt, Clock())
    follower.poll()
    ironic.inspect(C, 100)  # the marker node, inspected again
    ironic.inspect(A, 80)

    report = follower.poll()

    # C moved: B holds, and the page after B holds A and C again
    assert report is not None and not report.full and report.recorded == 2
    for uuid in (B, C, A):
        ironic.inspect(uuid, 200 + len(uuid))
    ironic.calls.clear()
    report = follower.poll()
    assert report is not None and report.full and report.recorded == 3
    assert ("inspected_page", (None, False)) in ironic.calls


def test_the_whole_scan_repeats_at_its_interval(
    rt: Runtime, ironic: FakeIronic
) -> None:
    rt.conf.set_override("full_scan_interval", 600, group="ironic_follow")
    ironic.add(A, 10)
    clock = Clock()
    follower = Follower(rt, clock)
    follower.poll()
    clock.now += 599
    assert not follower.poll().full  # type: ignore[union-attr]
    clock.now += 2
    assert follower.poll().full  # type: ignore[union-attr]
    follower.reset()  # the lead moved
    assert follower.poll().full  # type: ignore[union-attr]


def test_nulls_sorted_last_end_the_pages(rt: Runtime, ironic: FakeIronic) -> None:
    ironic.nulls_last = True  # a PostgreSQL Ironic
    ironic.add(A, 10)
    for number in range(20):
        ironic.add(f"eeeeeeee-0000-4000-8000-{number:012d}")  # never inspected
    follower = Follower(rt, Clock())
    follower.poll()
    ironic.calls.clear()

    follower.poll()

    pages = [arg for method, arg in ironic.calls if method == "inspected_page"]
    assert pages == [(A, True)]  # page_size 3: the never inspected end it


def test_two_inspections_between_polls_give_one_run(
    rt: Runtime, ironic: FakeIronic
) -> None:
    """What polling alone misses (doc/follow-ironic.md): only the last."""
    ironic.add(A, 10)
    follower = Follower(rt, Clock())
    follower.poll()
    ironic.inspect(A, 50)
    ironic.inspect(A, 90)

    assert follower.poll().recorded == 1  # type: ignore[union-attr]
    assert len(runs(rt, A)) == 2


def test_a_node_introspected_by_us_compares_with_our_run(
    rt: Runtime, ironic: FakeIronic
) -> None:
    ironic.add(A, 10, interface="redfish")
    follower = Follower(rt, Clock())
    follower.poll()
    first = runs(rt, A)[0].uuid
    row = introspections.get(rt.db, A)
    # our own introspection starts and is running when Ironic's next ends
    started = introspections.start(rt.db, A, manage_boot=False)
    assert started.state == states.STARTING
    data = post()
    data["inventory"]["memory"]["physical_mb"] *= 2
    ironic.inspect(A, 3600, data)

    assert follower.poll().recorded == 1  # type: ignore[union-attr]

    history = runs(rt, A)
    assert len(history) == 2 and history[0].changes == 1
    running = introspections.get(rt.db, A)
    assert running.state == states.STARTING  # ours is left alone
    assert row.hardware_run == first


def test_each_poll_is_noted_for_metrics(rt: Runtime, ironic: FakeIronic) -> None:
    ironic.add(A, 10)
    follower = Follower(rt, Clock())
    assert followed.poll_state(rt.db) is None

    follower.poll()
    state = followed.poll_state(rt.db)
    assert state is not None and state.host == "c1"
    assert state.polled_at is not None and state.error is None and state.lag == 0

    ironic.fail["inspected_node"] = exceptions.BaremetalError("Ironic answered 503")
    assert follower.poll() is None
    failed = followed.poll_state(rt.db)
    assert failed is not None and failed.polled_at == state.polled_at
    assert failed.failed_at is not None and "503" in (failed.error or "")

    del ironic.fail["inspected_node"]
    follower.poll()
    again = followed.poll_state(rt.db)
    assert again is not None and again.error is None and again.failed_at is None


def test_ironics_inspection_within_ours_is_left_to_ours(
    rt: Runtime, ironic: FakeIronic
) -> None:
    """[redfish]engine = ironic: our introspection asks Ironic to inspect;
    the follower leaves that inspection alone, ours marks it seen."""
    ironic.add(A, 10)
    follower = Follower(rt, Clock())
    follower.poll()
    introspections.start(rt.db, A, manage_boot=False)  # ours, running
    later = (introspections.utcnow() - T0).total_seconds() + 60
    ironic.inspect(A, later)  # Ironic's, asked by ours

    assert follower.poll().recorded == 0  # type: ignore[union-attr]
    assert len(runs(rt, A)) == 1
    inspection = inspection_of(ironic.nodes[A])
    assert inspection is not None
    assert followed.skip(rt.db, inspection)  # what ours does once it read it
    assert follower.poll().recorded == 0  # type: ignore[union-attr]
    assert len(runs(rt, A)) == 1


def test_data_of_a_shape_nothing_sends_does_not_stall_the_follower(
    rt: Runtime,
    ironic: FakeIronic,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    ironic.add(A, 10)
    ironic.add(B, 20)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("unhashable type: 'list'")

    real = observe.run_of
    monkeypatch.setattr(
        observe,
        "run_of",
        lambda db, node, *a: broken() if node["uuid"] == A else real(db, node, *a),
    )
    report = Follower(rt, Clock()).poll()

    assert report is not None and report.skipped == 1 and report.recorded == 1
    assert runs(rt, A) == [] and len(runs(rt, B)) == 1
    assert "Ironic's stored data could not be read" in caplog.text
