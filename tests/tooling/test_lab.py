import http.server
import io
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from inspector.intake import lookup
from lab.demos.progress import Progress
from lab.machines import hardware, lldp
from lab.machines.ramdisk import post_continue


def test_machines_are_deterministic_and_unique() -> None:
    first = hardware.make_lab(60, seed=3)
    again = hardware.make_lab(60, seed=3)
    assert [m.payload() for m in first] == [m.payload() for m in again]
    macs = [mac for m in first for mac in m.macs]
    assert len(macs) == len(set(macs))
    assert len({m.bmc_address for m in first}) == 60
    assert hardware.make_lab(5, seed=4)[0].payload() != first[0].payload()


def test_machines_vary_realistically() -> None:
    lab = hardware.make_lab(60)
    assert len({m.cpus for m in lab}) >= 4
    assert {len(m.inventory["disks"]) for m in lab} <= {1, 2, 3, 4}
    assert len({len(m.inventory["disks"]) for m in lab}) >= 3
    assert all(2 <= len(m.macs) <= 6 for m in lab)
    assert any(m.gpus for m in lab) and not all(m.gpus for m in lab)
    assert any(
        d["name"].startswith("/dev/nvme") for m in lab for d in m.inventory["disks"]
    )
    assert {m.enroll_port for m in lab} == {True, False}


def test_payload_is_found_by_lookup() -> None:
    machine = hardware.make_machine(7)
    attrs = lookup.from_data(machine.payload())
    assert machine.pxe_mac in attrs["mac"]
    assert attrs["bmc_address"] == [machine.bmc_address]


def test_error_behaviour_sets_error() -> None:
    assert hardware.make_machine(1, behaviour="error").payload()["error"]
    assert hardware.make_machine(1).payload()["error"] is None


def test_lldp_round_trip() -> None:
    tlvs = lldp.encode(
        "88:5a:92:01:00:00", "Ethernet1/17", "sw-tor-01", vlan=120, mtu=9216
    )
    assert lldp.decode(tlvs) == {
        "switch_chassis_id": "88:5a:92:01:00:00",
        "switch_port_id": "Ethernet1/17",
        "switch_system_name": "sw-tor-01",
        "switch_port_untagged_vlan_id": 120,
        "switch_port_mtu": 9216,
    }
    junk: list[Any] = [[1, "zz"], "junk", [9]]  # malformed on purpose
    assert lldp.decode(junk) == {}


def test_progress_counts_and_plain_output() -> None:
    out = io.StringIO()
    progress = Progress(4, stream=out)
    progress.update({"waiting": 2, "finished": 1, "error": 1})
    line = out.getvalue()
    assert "2/4" in line and "waiting=2" in line and "error=1" in line


class Handler(http.server.BaseHTTPRequestHandler):
    statuses: list[int] = []

    def do_POST(self) -> None:  # noqa: N802
        status = self.statuses.pop(0)
        length = int(self.headers["Content-Length"])
        json.loads(self.rfile.read(length))
        body = json.dumps(
            {"uuid": "u"} if status == 200 else {"error": {"message": "x"}}
        ).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_post_continue_retries_5xx_not_4xx(server: str) -> None:
    Handler.statuses = [503, 500, 200]
    status, body, attempts, _ = post_continue(server, {"a": 1}, attempts=5)
    assert (status, body, attempts) == (200, {"uuid": "u"}, 3)
    Handler.statuses = [404]
    status, _, attempts, _ = post_continue(server, {"a": 1}, attempts=5)
    assert (status, attempts) == (404, 1)


def test_post_continue_gives_up_on_dead_server() -> None:
    status, _, attempts, _ = post_continue("http://127.0.0.1:9", {}, attempts=2)
    assert status == 0 and attempts == 2


def test_ironic_access_log_counts_calls_after_its_start(tmp_path: Any) -> None:
    from lab.servers.ironic_log import AccessLog

    log = tmp_path / "ironic.log"
    line = (
        "2026-11-22 22:46:29.528 1145 INFO ironic.api [None req-6 - - - - - -] "
        "127.0.0.1 - {} - {} (5.61ms)\n"
    )
    uuid = "179b804d-85e9-4d95-b071-5590eec591a6"
    log.write_text(line.format(f"GET /v1/nodes/{uuid}", 200))
    access = AccessLog(log)
    with open(log, "a") as out:
        out.write(line.format(f"GET /v1/nodes/{uuid}", 200))
        out.write(line.format(f"PATCH /v1/nodes/{uuid}", 200))
        out.write(line.format("GET /v1/nodes?fields=name,power_state", 200))
        out.write("2026-11-22 INFO ironic.conductor.utils Successfully set power\n")
        out.write(line.format(f"PUT /v1/nodes/{uuid}/states/power", 202))
    assert access.calls() == {
        "GET /v1/nodes/<uuid>": 1,
        "PATCH /v1/nodes/<uuid>": 1,
        "PUT /v1/nodes/<uuid>/states/power": 1,
    }
    other = "0d6c6b8e-0c1d-4c5e-9a55-2a7c9b1f0e11"
    with open(log, "a") as out:
        out.write(line.format(f"PUT /v1/nodes/{other}/states/power", 202))
    assert access.per_node([uuid, other, "unseen"]) == {
        uuid: {
            "GET /v1/nodes/<uuid>": 1,
            "PATCH /v1/nodes/<uuid>": 1,
            "PUT /v1/nodes/<uuid>/states/power": 1,
        },
        other: {"PUT /v1/nodes/<uuid>/states/power": 1},
        "unseen": {},
    }


def test_apache_config_serves_the_wsgi_module(tmp_path: Any) -> None:
    from lab.servers.apache import ApacheApiServer

    server = ApacheApiServer(
        tmp_path, "http://127.0.0.1:1", port=8123, processes=3, threads=5
    )
    try:
        conf = server._httpd_conf()
        assert "Listen 127.0.0.1:8123" in conf
        assert "processes=3 threads=5" in conf
        assert "SetEnv" not in conf  # the config comes from Apache's environment
        assert "process-group=ironic-inspector-api" in conf  # preloaded
        assert "WSGIApplicationGroup %{GLOBAL}" in conf
        assert "python-home=" in conf
    finally:
        server.stop()


def test_repair_is_a_swapped_disk_and_less_memory() -> None:
    """The demo's second act: what the repaired machine's ramdisk posts
    differs from before by exactly one disk and the memory."""
    from inspector.history import diff, record

    machine = hardware.make_machine(3)
    before = record.build(machine.payload())
    old, new = hardware.repair(machine)
    assert old != new
    found = diff.changes(before, record.build(machine.payload()))
    assert sorted((c["component"], c["kind"]) for c in found) == sorted(
        [(f"disk:{old}", "removed"), (f"disk:{new}", "added"), ("memory", "changed")]
    )


@pytest.mark.parametrize(
    ("extra", "refused"),
    [
        ([], None),
        (["--split", "2"], "--split"),
        (["--pxe"], "--pxe"),
    ],
)
def test_demo_oob_refuses_the_shapes_it_does_not_run(
    extra: list[str], refused: str | None
) -> None:
    from lab import cli

    args = cli._parser().parse_args(["demo", "--oob", *extra])
    message = cli.oob_refusal(args)
    if refused is None:
        assert message is None
    else:
        assert message is not None and refused in message and "--oob" in message
    # without --oob the same options are the in-band demo's own
    assert cli.oob_refusal(cli._parser().parse_args(["demo", *extra])) is None


@pytest.mark.parametrize(
    ("extra", "refused"),
    [
        ([], None),
        (["--split", "2"], "--split"),
        (["--pxe"], "--pxe"),
        (["--oob"], "--oob"),
    ],
)
def test_demo_follow_refuses_the_shapes_it_does_not_run(
    extra: list[str], refused: str | None
) -> None:
    from lab import cli

    args = cli._parser().parse_args(["demo", "--follow", *extra])
    message = cli.oob_refusal(args)
    if refused is None:
        assert message is None
    else:
        assert message is not None and refused in message and "--follow" in message
