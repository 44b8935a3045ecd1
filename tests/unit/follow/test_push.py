"""A push of Ironic's inspection hook against a fake Ironic: checked
against the node's running inspection, recorded once whichever of the
push, a resend and the poll comes first, its data kept for a reapply and
its logs written as the ramdisk's."""

import base64
import datetime
import gzip
import logging
import pathlib
from typing import Any

import pytest

from inspector import exceptions, states
from inspector.db import followed, hardware_runs, introspections, stored_data
from inspector.follow import poller
from inspector.follow import push as follow_push
from inspector.follow.poller import Follower
from inspector.runtime import Runtime
from tests.unit.follow.conftest import T0, FakeIronic, at
from tests.unit.follow.test_poller import Clock, post, runs

A = "aaaaaaaa-0000-4000-8000-00000000000a"
CALLER = "192.0.2.7 (user ironic)"


@pytest.fixture(autouse=True)
def _stored(rt: Runtime) -> None:
    """Data kept in the database, as a reapply needs (the default,
    ironic-inspector's, keeps none)."""
    rt.conf.set_override("store_data", "database", group="processing")


def running(ironic: FakeIronic, uuid: str = A, started: float = 0) -> None:
    """Ironic inspects ``uuid``: started at ``T0 + started``, not finished
    (the hook runs then, holding the node's lock)."""
    if uuid not in ironic.nodes:
        ironic.add(uuid, name="rack1-a")
    ironic.nodes[uuid]["inspection_started_at"] = at(started)
    ironic.nodes[uuid]["inspection_finished_at"] = None


def finishes(ironic: FakeIronic, uuid: str = A, finished: float = 40) -> None:
    """Ironic ends the inspection well, as Ironic 39 does: the finish set,
    the start cleared; its stored inventory is what was pushed."""
    ironic.inspect(uuid, finished)
    ironic.nodes[uuid]["inspection_started_at"] = None


def pushed(started: float = 0, data: dict[str, Any] | None = None, **kw: Any) -> Any:
    post_data = post() if data is None else data
    post_data.pop("logs", None)
    return follow_push.Push(
        node_uuid=kw.get("node", A),
        started_at=at(started),
        data=post_data,
        logs=kw.get("logs"),
        caller=CALLER,
    )


def test_a_push_is_recorded_as_ironics_running_inspection(
    rt: Runtime, ironic: FakeIronic
) -> None:
    running(ironic)

    taken = follow_push.accept(rt, pushed())

    assert taken.recorded and taken.message == "recorded"
    (entry,) = runs(rt, A)
    assert (entry.uuid, entry.source, entry.interface) == (taken.run, "ironic", "agent")
    row = followed.seen(rt.db, [A])[A]
    assert row.finished_at is None and row.started_at is not None
    status = introspections.get(rt.db, A)
    assert status.state == states.FINISHED and status.hardware_run == taken.run
    # reapply-able: the data as the ramdisk sent it, the processed data too
    assert stored_data.get(rt.db, A, processed=False) == pushed().data
    assert stored_data.get(rt.db, A, processed=True)["inventory"]
    assert ("inspected_node", A) in ironic.calls
    assert "get_inventory" not in ironic.methods()  # the push brought it


def test_a_duplicate_is_dropped(rt: Runtime, ironic: FakeIronic) -> None:
    running(ironic)
    follow_push.accept(rt, pushed())

    again = follow_push.accept(rt, pushed())

    assert not again.recorded and again.message == "already recorded"
    assert len(runs(rt, A)) == 1


def test_a_forged_start_time_is_refused_and_logged(
    rt: Runtime, ironic: FakeIronic, caplog: pytest.LogCaptureFixture
) -> None:
    running(ironic, started=0)

    with (
        caplog.at_level(logging.WARNING),
        pytest.raises(
            follow_push.InspectionMismatch,
            match="Ironic is running an inspection started at",
        ) as caught,
    ):
        follow_push.accept(rt, pushed(started=5))

    assert caught.value.code == 409
    assert runs(rt, A) == [] and followed.seen(rt.db, [A]) == {}
    assert "Refused a push" in caplog.text and CALLER in caplog.text


def test_a_start_after_ironics_last_finish_is_refused(
    rt: Runtime, ironic: FakeIronic
) -> None:
    running(ironic, started=0)
    finishes(ironic, finished=40)

    with pytest.raises(follow_push.InspectionMismatch, match="finished at .*before"):
        follow_push.accept(rt, pushed(started=50))

    assert runs(rt, A) == []


def test_a_push_resent_after_ironic_ended_is_recorded(
    rt: Runtime, ironic: FakeIronic
) -> None:
    running(ironic, started=0)
    finishes(ironic, finished=40)  # the service was away: the push waited

    taken = follow_push.accept(rt, pushed(started=0))

    assert taken.recorded
    row = followed.seen(rt.db, [A])[A]
    assert row.started_at is not None and row.finished_at is None


def test_a_push_for_an_inspection_ironic_shows_none_of_is_refused(
    rt: Runtime, ironic: FakeIronic
) -> None:
    ironic.add(A)  # never inspected, or its inspection failed (no start)

    with pytest.raises(follow_push.InspectionMismatch, match="no inspection"):
        follow_push.accept(rt, pushed())

    assert runs(rt, A) == []


def test_a_node_ironic_does_not_have_is_refused_and_logged(
    rt: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING), pytest.raises(exceptions.NodeNotFound):
        follow_push.accept(rt, pushed())

    assert runs(rt, A) == []
    assert "Ironic has no such node" in caplog.text and CALLER in caplog.text


def test_a_time_that_is_not_a_time_is_bad_input(
    rt: Runtime, ironic: FakeIronic
) -> None:
    running(ironic)
    bad = follow_push.Push(A, "yesterday", post(), None, CALLER)

    with pytest.raises(exceptions.InvalidInput, match="ISO 8601"):
        follow_push.accept(rt, bad)


def test_not_an_inventory_is_bad_input(rt: Runtime, ironic: FakeIronic) -> None:
    running(ironic)

    with pytest.raises(exceptions.InvalidInput, match="not an ironic-python-agent"):
        follow_push.accept(rt, pushed(data={"inventory": {"nothing": 1}}))

    assert runs(rt, A) == []


def test_ironic_away_or_refusing_is_a_503_the_hook_spools(
    rt: Runtime, ironic: FakeIronic
) -> None:
    running(ironic)
    ironic.fail["inspected_node"] = exceptions.BaremetalError(reason="down")
    with pytest.raises(exceptions.BaremetalError) as away:
        follow_push.accept(rt, pushed())
    assert away.value.code == 503

    ironic.fail["inspected_node"] = exceptions.BaremetalForbidden("policy")
    with pytest.raises(exceptions.ServiceUnavailable, match="baremetal:node:get"):
        follow_push.accept(rt, pushed())
    assert runs(rt, A) == []


def test_an_ended_push_takes_the_finish_a_poll_sees(
    rt: Runtime, ironic: FakeIronic
) -> None:
    running(ironic, started=0)
    follow_push.accept(rt, pushed())
    finishes(ironic, finished=40)
    polled = poller.inspection_of(ironic.nodes[A])
    assert polled is not None and polled.started_at is None  # as Ironic shows it

    assert followed.ended_push(rt.db, polled)

    row = followed.seen(rt.db, [A])[A]
    assert row.started_at is not None and row.finished_at == polled.finished_at
    assert not followed.ended_push(rt.db, polled)  # once
    assert followed.newest(rt.db, 1) == [row]  # the poll's marker


def test_an_ended_push_is_not_an_earlier_inspection(rt: Runtime) -> None:
    followed.record(rt.db, followed.Inspection(A, T0, None), hardware_runs.new_run(A))
    earlier = T0 - datetime.timedelta(seconds=1)

    assert not followed.ended_push(rt.db, followed.Inspection(A, None, earlier))
    assert followed.seen(rt.db, [A])[A].finished_at is None


def test_a_poll_after_the_push_records_nothing_twice(
    rt: Runtime, ironic: FakeIronic
) -> None:
    running(ironic)
    taken = follow_push.accept(rt, pushed())
    finishes(ironic)
    follower = Follower(rt, Clock())

    report = follower.poll()

    assert [e.uuid for e in runs(rt, A)] == [taken.run]
    assert report is not None and report.recorded == 0 and report.known == 1
    # the poll added Ironic's finish, so its marker moves on
    assert followed.seen(rt.db, [A])[A].finished_at is not None
    assert follower.poll().recorded == 0  # type: ignore[union-attr]
    assert len(runs(rt, A)) == 1


def test_a_push_resent_after_the_poll_is_dropped_but_its_data_kept(
    rt: Runtime, ironic: FakeIronic
) -> None:
    running(ironic)
    finishes(ironic)  # the service was away: the push went to the spool
    Follower(rt, Clock()).poll()
    (polled,) = runs(rt, A)
    with pytest.raises(exceptions.DataNotFound):
        stored_data.get(rt.db, A, processed=False)

    resent = follow_push.accept(rt, pushed())

    assert not resent.recorded and resent.message == "already recorded"
    assert [e.uuid for e in runs(rt, A)] == [polled.uuid]
    # the run the poll recorded can now be reapplied: the same hardware
    assert stored_data.get(rt.db, A, processed=False) == pushed().data


def test_a_resent_push_unlike_the_polled_run_leaves_its_data_alone(
    rt: Runtime, ironic: FakeIronic
) -> None:
    running(ironic)
    finishes(ironic)
    Follower(rt, Clock()).poll()
    other = post()
    other["inventory"]["disks"][0]["serial"] = "NOT-THE-POLLED-ONE"

    assert not follow_push.accept(rt, pushed(data=other)).recorded

    with pytest.raises(exceptions.DataNotFound):
        stored_data.get(rt.db, A, processed=False)


def test_a_newer_inspection_after_a_push_is_a_new_run(
    rt: Runtime, ironic: FakeIronic
) -> None:
    running(ironic, started=0)
    follow_push.accept(rt, pushed(started=0))
    finishes(ironic, finished=40)
    running(ironic, started=100)

    again = follow_push.accept(rt, pushed(started=100))
    with pytest.raises(follow_push.InspectionMismatch):
        follow_push.accept(rt, pushed(started=0))  # a late resend of the first
    finishes(ironic, finished=140)
    late = follow_push.accept(rt, pushed(started=0))  # ... after both ended

    assert again.recorded and not late.recorded
    assert late.message.startswith("a later inspection of the node is recorded")
    assert len(runs(rt, A)) == 2


def test_an_introspection_of_ours_running_keeps_the_push_out(
    rt: Runtime, ironic: FakeIronic
) -> None:
    # ours started first and asked Ironic to inspect (out of band through
    # Ironic's redfish inspection): that inspection is ours to record
    introspections.start(rt.db, A, False, {"mac": []}, mode=states.OUT_OF_BAND)
    running(ironic, started=10**6)

    taken = follow_push.accept(rt, pushed(started=10**6))

    assert not taken.recorded and "introspection of this service" in taken.message
    assert runs(rt, A) == []


def _logs() -> str:
    return base64.b64encode(gzip.compress(b"journal")).decode()


def test_the_logs_are_written_as_the_ramdisks(
    rt: Runtime, ironic: FakeIronic, tmp_path: pathlib.Path
) -> None:
    logs_dir = tmp_path / "logs"
    logs_dir.mkdir()
    rt.conf.set_override("ramdisk_logs_dir", str(logs_dir), group="processing")
    running(ironic)
    follow_push.accept(rt, pushed(logs=_logs()))
    assert list(logs_dir.iterdir()) == []  # a success: only when always

    rt.conf.set_override("always_store_ramdisk_logs", True, group="processing")
    running(ironic, started=100)
    follow_push.accept(rt, pushed(started=100, logs=_logs()))

    (written,) = logs_dir.iterdir()
    assert written.name.startswith(A)
    assert gzip.decompress(written.read_bytes()) == b"journal"
    assert "logs" not in stored_data.get(rt.db, A, processed=False)


def test_the_data_follows_the_store(
    rt: Runtime, ironic: FakeIronic, tmp_path: pathlib.Path
) -> None:
    rt.conf.set_override("store_data", "directory", group="processing")
    store = tmp_path / "store"
    rt.conf.set_override("store_data_dir", str(store), group="processing")
    running(ironic)

    follow_push.accept(rt, pushed())

    names = {p.name for p in (store / A).iterdir()}
    assert names == {"unprocessed.json", "processed.json", "introspection.json"}
    assert rt.stores.current().for_reapply(A) == pushed().data
    with pytest.raises(exceptions.DataNotFound):  # not kept twice
        stored_data.get(rt.db, A, processed=False)

    rt.conf.set_override("store_data", "none", group="processing")
    running(ironic, started=100)
    assert follow_push.accept(rt, pushed(started=100)).recorded
    assert hardware_runs.exists(rt.db, A)
