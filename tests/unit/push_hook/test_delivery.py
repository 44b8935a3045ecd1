"""The hook's delivery against a loopback server: delivered, refused,
spooled when the service is away or slow, resent later oldest first, and
never longer than the timeout."""

import json
import logging
import pathlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from inspector_push_hook import sender
from inspector_push_hook.delivery import Delivery
from inspector_push_hook.settings import PATH, Settings
from inspector_push_hook.spool import Spool

from tests.unit.push_hook.conftest import Service

NODE = "1be26c0b-03f2-4d7d-a6a1-4e5a8b7e6f01"
OTHER = "2be26c0b-03f2-4d7d-a6a1-4e5a8b7e6f02"
SLACK = 1.0
"""Seconds a loaded machine may add to a bounded wait (the bound is the
timeout; the scheduler's delay is not the hook's)."""


def push(
    node: str = NODE, started: str = "2026-12-01T10:00:00+00:00"
) -> dict[str, Any]:
    return {
        "node_uuid": node,
        "node_name": "rack1-1",
        "inspect_interface": "agent",
        "inspection_started_at": started,
        "inventory": {"cpu": {"count": 8}},
        "plugin_data": {"boot_interface": "01-52-54-00-00-00-01"},
        "logs": None,
    }


def delivery(
    url: str, spool: pathlib.Path, *, timeout: float = 1.0, limit: int = 10
) -> Delivery:
    settings = Settings(url=url, timeout=timeout, spool_dir=str(spool), spool_max=limit)
    return Delivery(settings, dict)


def spooled(spool: pathlib.Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_bytes()) for p in Spool(str(spool), 10).entries()]


def test_a_push_is_posted_and_nothing_is_spooled(
    service: Service, tmp_path: pathlib.Path
) -> None:
    delivery(service.url + "/", tmp_path).push(push())

    assert service.bodies == [push()]
    assert service.headers[0]["Content-Type"] == "application/json"
    assert spooled(tmp_path) == []


def test_the_service_away_spools_the_push_at_once(
    closed_url: str, tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    started = time.monotonic()
    with caplog.at_level(logging.WARNING):
        delivery(closed_url, tmp_path, timeout=5.0).push(push())

    assert time.monotonic() - started < 1.5  # refused: no wait for the timeout
    assert spooled(tmp_path) == [push()]
    assert "spooled as" in caplog.text and NODE in caplog.text


def test_spooled_pushes_go_after_the_next_one_oldest_first(
    service: Service, closed_url: str, tmp_path: pathlib.Path
) -> None:
    away = delivery(closed_url, tmp_path)
    away.push(push(NODE))
    away.push(push(OTHER))
    assert len(spooled(tmp_path)) == 2
    third = push(NODE, "2026-12-01T11:00:00+00:00")

    delivery(service.url, tmp_path).push(third)

    assert [b["node_uuid"] for b in service.bodies] == [NODE, NODE, OTHER]
    assert service.bodies[0] == third  # the inspection's own push first
    assert spooled(tmp_path) == []


@pytest.fixture
def silent() -> Iterator[str]:
    """A loopback URL that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    host, port = listener.getsockname()
    yield f"http://{host}:{port}"
    stop.set()
    thread.join(5)
    for conn in accepted:
        conn.close()
    listener.close()


def test_a_silent_service_holds_the_inspection_no_longer_than_the_timeout(
    silent: str, tmp_path: pathlib.Path
) -> None:
    sending = delivery(silent, tmp_path, timeout=0.5)
    started = time.monotonic()

    sending.push(push())

    took = time.monotonic() - started
    assert 0.45 <= took < 0.5 + SLACK, took
    # the worker gives up by then too, and keeps the push for later
    deadline = time.monotonic() + 3
    while not spooled(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert spooled(tmp_path) == [push()]


def test_a_slow_service_gets_the_push_and_the_hook_returns_in_time(
    service: Service, tmp_path: pathlib.Path
) -> None:
    service.delay = 3.0  # far beyond the bound: waiting for it would show
    started = time.monotonic()

    delivery(service.url, tmp_path, timeout=0.3).push(push())

    took = time.monotonic() - started
    assert took < 0.3 + SLACK, took
    # the service got the body (it drops the duplicate the spool resends);
    # its handler may read it a moment after the hook returned
    deadline = time.monotonic() + 5
    while not service.bodies and time.monotonic() < deadline:
        time.sleep(0.02)
    assert service.bodies == [push()]


@pytest.mark.parametrize("status", [400, 404, 409, 413])
def test_a_refusal_for_good_is_dropped(
    service: Service,
    tmp_path: pathlib.Path,
    status: int,
    caplog: pytest.LogCaptureFixture,
) -> None:
    service.status = status
    with caplog.at_level(logging.WARNING):
        delivery(service.url, tmp_path).push(push())

    assert spooled(tmp_path) == []
    assert f"refused with {status}" in caplog.text
    assert "not sent again" in caplog.text


@pytest.mark.parametrize("status", [401, 403, 429, 500, 503])
def test_a_refusal_that_may_pass_is_spooled(
    service: Service, tmp_path: pathlib.Path, status: int
) -> None:
    service.status = status
    delivery(service.url, tmp_path).push(push())

    assert spooled(tmp_path) == [push()]


def test_the_spool_keeps_the_newest_within_its_bound(
    closed_url: str, tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    away = delivery(closed_url, tmp_path, limit=3)
    starts = [f"2026-12-01T10:00:0{n}+00:00" for n in range(5)]
    with caplog.at_level(logging.WARNING):
        for start in starts:
            away.push(push(started=start))

    assert [p["inspection_started_at"] for p in spooled(tmp_path)] == starts[2:]
    assert caplog.text.count("dropped the oldest push") == 2


def test_resending_stops_at_the_deadline(
    service: Service, closed_url: str, tmp_path: pathlib.Path
) -> None:
    away = delivery(closed_url, tmp_path, limit=50)
    for n in range(20):
        away.push(push(started=f"2026-12-01T10:00:{n:02d}+00:00"))
    service.delay = 0.1
    started = time.monotonic()

    delivery(service.url, tmp_path, timeout=0.5).push(push(OTHER))

    assert time.monotonic() - started < 0.5 + SLACK
    left = len(spooled(tmp_path))
    assert 0 < left < 20  # some resent, the rest for the next inspection
    assert len(service.bodies) >= 1 + (20 - left)


def test_resending_keeps_what_fails_again_and_drops_what_is_refused(
    service: Service, closed_url: str, tmp_path: pathlib.Path
) -> None:
    away = delivery(closed_url, tmp_path)
    away.push(push(NODE))
    away.push(push(OTHER))
    sending = delivery(service.url, tmp_path)

    service.status = 503
    assert sending.resend(time.monotonic() + 1) == 0
    assert len(spooled(tmp_path)) == 2  # the first failed: both stay
    assert len(service.bodies) == 1

    service.status = 409  # Ironic has inspected again since: stale
    assert sending.resend(time.monotonic() + 1) == 0
    assert spooled(tmp_path) == []


def test_one_sender_resends_at_a_time(
    service: Service, closed_url: str, tmp_path: pathlib.Path
) -> None:
    delivery(closed_url, tmp_path).push(push())
    spool = Spool(str(tmp_path), 10)

    with spool.resending() as mine:
        assert mine
        assert delivery(service.url, tmp_path).resend(time.monotonic() + 1) == 0
    assert service.bodies == []
    assert delivery(service.url, tmp_path).resend(time.monotonic() + 1) == 1


def test_credentials_that_cannot_be_had_spool_the_push(
    tmp_path: pathlib.Path, service: Service
) -> None:
    def no_keystone() -> dict[str, str]:
        raise ConnectionError("Keystone is away")

    settings = Settings(url=service.url, spool_dir=str(tmp_path))
    Delivery(settings, no_keystone).push(push())

    assert service.bodies == []
    assert spooled(tmp_path) == [push()]


def test_no_spool_loses_the_push_with_a_warning(
    closed_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(url=closed_url, spool_dir="")
    with caplog.at_level(logging.WARNING):
        Delivery(settings, dict).push(push())

    assert "there is no spool: the push is lost" in caplog.text


def test_a_spool_that_cannot_be_written_is_logged(
    closed_url: str, tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    with caplog.at_level(logging.WARNING):
        delivery(closed_url, blocked / "spool").push(push())

    assert "could not be spooled" in caplog.text


def test_the_answer_reads_the_services_error() -> None:
    answer = sender.Answer(409, "x")
    assert not answer.delivered and not answer.worth_retrying
    assert sender.Answer(None, "refused").worth_retrying
    assert sender.Answer(202, "").delivered
    assert sender._message(b'{"error": {"message": "no"}}', 400) == "no"
    assert sender._message(b"<html>proxy</html>", 502) == "<html>proxy</html>"
    assert sender._message(b"", 502) == "HTTP 502"


def test_the_endpoint_is_below_the_url() -> None:
    assert Settings(url="https://svc:5050/").endpoint == "https://svc:5050" + PATH
