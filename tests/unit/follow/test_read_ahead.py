"""Inventories read ahead while a poll records: the reads run on a few
threads, the records still go in finish order, and a poll stops at the
same node as one read after the other would, with the same marker."""

import logging
import threading
from typing import Any

import pytest

from inspector import exceptions
from inspector.db import followed
from inspector.follow import poller
from inspector.follow import push as follow_push
from inspector.follow.poller import Follower
from inspector.follow.readahead import ReadAhead
from inspector.runtime import Runtime
from tests.unit.follow.conftest import T0, FakeIronic, at
from tests.unit.follow.test_poller import Clock, post, runs

A = "aaaaaaaa-0000-4000-8000-000000000001"
B = "bbbbbbbb-0000-4000-8000-000000000002"
C = "cccccccc-0000-4000-8000-000000000003"
D = "dddddddd-0000-4000-8000-000000000004"
E = "eeeeeeee-0000-4000-8000-000000000005"
P = "ffffffff-0000-4000-8000-000000000006"


# the reader alone


def test_reads_run_ahead_and_are_taken_in_order() -> None:
    started: list[int] = []
    last = threading.Event()

    def read(key: int) -> int:
        started.append(key)
        if key == 0:
            # the first answers only once the last was asked: read ahead
            assert last.wait(10)
        if key == 2:
            last.set()
        return key * 10

    with ReadAhead(read, [0, 1, 2, 3, 4], depth=3) as reads:
        taken = [reads.take(i)() for i in range(5)]

    assert taken == [0, 10, 20, 30, 40]
    assert sorted(started) == [0, 1, 2, 3, 4]


def test_no_more_than_depth_reads_are_made_ahead() -> None:
    lock = threading.Lock()
    asked: list[int] = []

    def read(key: int) -> int:
        with lock:
            asked.append(key)
        return key

    with ReadAhead(read, list(range(10)), depth=3) as reads:
        assert reads.take(0)() == 0
        with lock:
            assert max(asked) <= 2  # the one taken and two ahead
        assert reads.take(1)() == 1
    assert max(asked) <= 3  # leaving cancels the reads not begun


def test_a_failure_is_raised_at_its_turn_and_not_before() -> None:
    def read(key: str) -> str:
        if key == "b":
            raise exceptions.BaremetalError("Ironic answered 503")
        return key

    with ReadAhead(read, ["a", "b", "c"], depth=3) as reads:
        assert reads.take(0)() == "a"
        second = reads.take(1)
        with pytest.raises(exceptions.BaremetalError, match="503"):
            second()


def test_depth_one_reads_in_the_callers_thread_when_taken() -> None:
    threads: list[str] = []

    def read(key: str) -> str:
        threads.append(threading.current_thread().name)
        return key

    with ReadAhead(read, ["a", "b"], depth=1) as reads:
        first = reads.take(0)
        assert threads == []  # nothing read before it is called
        assert first() == "a"
    assert threads == [threading.current_thread().name]


def test_taken_out_of_turn_is_refused() -> None:
    with ReadAhead(lambda key: key, ["a", "b", "c"], depth=2) as reads:
        with pytest.raises(ValueError, match="out of turn"):
            reads.take(1)


# the poll


def recorded_order(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.args[0].split()[1]  # type: ignore[index,union-attr]
        for record in caplog.records
        if "recorded as run" in record.getMessage()
    ]


def test_a_poll_reads_ahead_and_records_in_finish_order(
    rt: Runtime, ironic: FakeIronic, caplog: pytest.LogCaptureFixture
) -> None:
    for number, uuid in enumerate((A, B, C, D, E)):
        ironic.add(uuid, 10 + number)
    real = ironic.get_inventory
    fourth_asked = threading.Event()

    def slow_first(uuid: str) -> dict[str, Any]:
        if uuid == D:
            fourth_asked.set()
        if uuid == A:
            # A answers once D (three ahead) was asked: read ahead, and
            # A's record still comes first
            assert fourth_asked.wait(10), "D was not read ahead of A's record"
        return real(uuid)

    ironic.get_inventory = slow_first  # type: ignore[method-assign,assignment]
    with caplog.at_level(logging.INFO):
        report = Follower(rt, Clock()).poll()

    assert report is not None and report.recorded == 5
    assert recorded_order(caplog) == [A, B, C, D, E]
    assert poller.READ_AHEAD >= 2


def test_a_stop_while_reading_ahead_is_where_one_by_one_stops(
    rt: Runtime, ironic: FakeIronic
) -> None:
    ironic.add(A, 10)
    follower = Follower(rt, Clock())
    follower.poll()
    later = [f"99999999-0000-4000-8000-{number:012d}" for number in range(8)]
    for number, uuid in enumerate([B, C, *later]):
        ironic.add(uuid, 20 + number)
    ironic.fail_on["get_inventory"] = C
    ironic.calls.clear()

    assert follower.poll() is None

    # B recorded; C stopped the poll; those after, read ahead or not, are not
    assert len(runs(rt, B)) == 1
    assert all(runs(rt, uuid) == [] for uuid in [C, *later])
    assert [i.node_uuid for i in followed.newest(rt.db, 5)] == [B, A]
    read = [arg for method, arg in ironic.calls if method == "get_inventory"]
    # never more than READ_AHEAD reads from C's on
    assert set(read) <= {B, C, *later[: poller.READ_AHEAD - 1]}

    ironic.fail_on.clear()
    report = follower.poll()  # resumes at C: each recorded once
    assert report is not None and not report.full and report.recorded == 9
    assert all(len(runs(rt, uuid)) == 1 for uuid in [B, C, *later])
    assert follower.poll().recorded == 0  # type: ignore[union-attr]


def test_a_refusal_read_ahead_for_a_node_left_alone_never_stops_the_poll(
    rt: Runtime, ironic: FakeIronic
) -> None:
    """A read made ahead for a node whose turn needs none (ours runs on
    it) is thrown away, its failure with it, as if never made."""
    from inspector.db import introspections

    ironic.add(A, 10)
    follower = Follower(rt, Clock())
    follower.poll()
    introspections.start(rt.db, B, manage_boot=False)  # ours, running
    later = (introspections.utcnow() - T0).total_seconds()
    ironic.add(B, later + 60)
    ironic.add(C, later + 70)
    ironic.fail_on["get_inventory"] = B

    report = follower.poll()

    assert report is not None and report.recorded == 1
    assert runs(rt, B) == [] and len(runs(rt, C)) == 1


def test_a_pushed_row_ends_only_in_its_turn(rt: Runtime, ironic: FakeIronic) -> None:
    """A push's row ended by a poll moves the marker: a stop at an earlier
    node must leave it as it was, as one read after the other would."""
    rt.conf.set_override("store_data", "database", group="processing")
    ironic.add(A, 10)
    follower = Follower(rt, Clock())
    follower.poll()
    ironic.add(P, name="rack1-p")
    ironic.nodes[P]["inspection_started_at"] = at(20)
    data = post()
    data.pop("logs", None)
    follow_push.accept(
        rt,
        follow_push.Push(
            node_uuid=P, started_at=at(20), data=data, logs=None, caller="test"
        ),
    )
    ironic.add(B, 30)
    ironic.inspect(P, 60)  # the pushed inspection ends (Ironic clears the start)
    ironic.nodes[P]["inspection_started_at"] = None
    ironic.fail_on["get_inventory"] = B

    assert follower.poll() is None

    assert followed.seen(rt.db, [P])[P].finished_at is None  # not ended
    assert followed.newest(rt.db, 1)[0].node_uuid == A  # the marker stays

    ironic.fail_on.clear()
    report = follower.poll()
    assert report is not None and report.recorded == 1 and report.known == 1
    assert followed.seen(rt.db, [P])[P].finished_at is not None
    assert len(runs(rt, P)) == 1 and len(runs(rt, B)) == 1
