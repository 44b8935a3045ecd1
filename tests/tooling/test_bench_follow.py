"""The follow benchmark's arithmetic, its reading of Ironic's log and what
it hands the seed script (lab/bench/follow*.py; the benchmark itself runs
by ``make bench BENCH_SCALE=follow`` only)."""

import datetime
import json
import pathlib

from lab.bench import (
    follow,
    follow_records,
    follow_report,
    follow_requests,
    ironic_seed,
)
from lab.machines import hardware

UUID = "0588d91d-fbe8-4a8e-a1cf-0d1d47b3df41"
T0 = datetime.datetime(2026, 12, 1, 10, 0, 0, 123456)


def test_requests_to_ironic_are_told_apart() -> None:
    fields = "fields=uuid%2Cname%2Cinspection_started_at%2Cinspection_finished_at"
    assert (
        follow_requests.kind_of(
            "GET",
            f"/v1/nodes?{fields}&limit=1000&sort_key=inspection_finished_at"
            f"&sort_dir=asc&marker={UUID}",
        )
        == follow_requests.POLL
    )
    assert (
        follow_requests.kind_of("GET", f"/v1/nodes?{fields}&limit=1000")
        == follow_requests.SCAN
    )
    assert (
        follow_requests.kind_of("GET", f"/v1/nodes?{fields}&limit=1000&marker={UUID}")
        == "whole scan page"
    )
    assert (
        follow_requests.kind_of("GET", f"/v1/nodes/{UUID}?{fields}")
        == "node (marker check)"
    )
    assert follow_requests.kind_of("GET", f"/v1/nodes/{UUID}/inventory") == "inventory"
    assert (
        follow_requests.kind_of(
            "GET", f"/v1/nodes?fields=uuid&limit=1000&marker={UUID}"
        )
        == "reconcile node list page"
    )
    assert (
        follow_requests.kind_of("PATCH", f"/v1/nodes/{UUID}")
        == "PATCH /v1/nodes/<uuid>"
    )


def test_requests_are_counted_from_the_log_written_after(
    tmp_path: pathlib.Path,
) -> None:
    log = tmp_path / "ironic.log"
    line = (
        "2026-12-01 10:00:00.000 1 INFO ironic.api [None req-1 - - - - - -] "
        "127.0.0.1 - GET {} - 200 (5.61ms)\n"
    )
    log.write_text(line.format(f"/v1/nodes/{UUID}/inventory"))
    requests = follow_requests.Requests(log)
    with open(log, "a") as out:
        out.write(line.format(f"/v1/nodes/{UUID}/inventory"))
        out.write(line.format(f"/v1/nodes/{UUID}?fields=uuid"))
    assert requests.counts() == {"inventory": 1, "node (marker check)": 1}


def test_ironic_cost_per_poll_less_its_cost_with_no_client() -> None:
    idle = [
        {"seconds": 60.0, "ironic_cpu_s": 0.3},
        {"seconds": 60.0, "ironic_cpu_s": 0.9},
    ]
    rate = follow_report.idle_rate(idle)
    assert rate == 0.01
    polls = {
        "seconds": 60.0,
        "ironic_cpu_s": 1.8,
        "requests": {follow_requests.POLL: 60},
    }
    assert follow_report.per_poll_ms(polls, rate, follow_requests.POLL) == 20.0
    assert follow_report.per_poll_ms(polls, rate, follow_requests.SCAN) is None
    assert follow_report.share_of_core(20.0, 60) == 0.033


def test_latency_is_from_the_written_finish_to_our_record() -> None:
    later = T0 + datetime.timedelta(seconds=2)
    rows = {
        "a": (T0, T0 + datetime.timedelta(seconds=3.5), "run-a"),
        "b": (T0, later, None),  # marked seen, no run
        "c": (T0 - datetime.timedelta(hours=1), later, "run-c"),  # older one
    }
    took, missing = follow_records.latencies({"a": T0, "b": T0, "c": T0, "d": T0}, rows)
    assert took == [3.5]
    assert missing == ["b", "c", "d"]
    assert follow_records.spread([]) == {"p50": None, "p99": None, "max": None}
    assert follow_records.spread([1.0, 2.0, 3.0]) == {
        "p50": 2.0,
        "p99": 3.0,
        "max": 3.0,
    }


def test_the_seed_script_gets_a_payload_as_ironic_stores_it() -> None:
    machine = hardware.make_machine(3)
    entry = follow.seed_entry(machine, UUID)
    payload = machine.payload()
    assert entry["inventory"] == payload.pop("inventory")
    assert entry["plugin_data"] == payload
    json.dumps(entry)  # a line of the seed script's file
    times = follow.inspected_at(1)
    finished = ironic_seed._when(times["finished_at"])
    assert finished == follow.FLEET_EPOCH + datetime.timedelta(seconds=1)
    assert ironic_seed._when(times["started_at"]) < finished
    assert ironic_seed._when("2026-12-01T10:00:00.123456+01:00") == T0.replace(hour=9)


def test_node_uuids_are_the_same_for_a_seed() -> None:
    first = follow.node_uuids(5, seed=1)
    assert first == follow.node_uuids(5, seed=1) and len(set(first)) == 5
    assert first != follow.node_uuids(5, seed=2)


def test_a_polls_turn_per_node_is_its_wall_per_inventory_read() -> None:
    """Reads made ahead overlap: a node's turn is the poll's wall per node,
    whatever Ironic's answers add up to."""
    polls = [
        {"start": 0.0, "end": 0.1, "inventory_ms": []},
        # 4 reads of 80 ms each, overlapping, in 0.2 s
        {"start": 10.0, "end": 10.2, "inventory_ms": [80.0] * 4},
        {"start": 20.0, "end": 20.1, "inventory_ms": []},
    ]
    timeline = follow_requests.poll_timeline(polls)
    assert timeline["polls"] == [{"nodes": 4, "seconds": 0.2, "wait_before_s": 9.9}]
    assert timeline["inventory_read_ms_p50"] == 80.0
    assert timeline["turn_ms_p50"] == 50.0
