"""An outage is one line when it starts and one when it ends."""

import logging

import pytest

from inspector import exceptions, outages


def lines(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= level]


def test_one_warning_per_outage_then_one_recovery(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = outages.OutageLog(logging.getLogger("test.outage"), "The heartbeat")
    caplog.set_level(logging.DEBUG, logger="test.outage")
    for _ in range(50):
        log.failed(exceptions.DatabaseUnavailable(reason="connection refused"))
    assert log.failing
    warnings = lines(caplog, logging.WARNING)
    assert warnings == [
        "The heartbeat failed: The database is unreachable: connection refused; "
        "retrying quietly"
    ]
    assert len(lines(caplog, logging.DEBUG)) == 50  # the rest at DEBUG
    caplog.clear()
    log.ok()
    log.ok()  # no outage, nothing to say
    infos = lines(caplog, logging.INFO)
    assert len(infos) == 1 and infos[0].startswith("The heartbeat works again after")
    assert "(50 failed tries)" in infos[0]
    assert not log.failing


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_recovery_counts_to_the_first_success_when_tried_all_along(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    log = outages.OutageLog(logging.getLogger("test.along"), "Sweep", clock=clock)
    caplog.set_level(logging.INFO, logger="test.along")
    for _ in range(20):  # a try every second for 20 s
        log.failed("down")
        clock.now += 1
    log.ok()
    assert lines(caplog, logging.INFO)[-1] == (
        "Sweep works again after 20 s (20 failed tries)"
    )


def test_recovery_after_a_pause_in_the_tries_gives_how_long_they_failed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An API process fails requests for 20 s, then gets its next request
    120 s later: the outage was not 140 s long."""
    clock = Clock()
    log = outages.OutageLog(logging.getLogger("test.api"), "Handing over", clock=clock)
    caplog.set_level(logging.INFO, logger="test.api")
    for _ in range(11):  # a request every 2 s for 20 s
        log.failed("down")
        clock.now += 2
    clock.now += 118
    log.ok()
    assert lines(caplog, logging.INFO)[-1] == (
        "Handing over works again; its tries failed for 20 s (11 failed tries), "
        "then none was made for 120 s until this one"
    )
    assert not log.failing


def test_long_outage_reminds(caplog: pytest.LogCaptureFixture) -> None:
    log = outages.OutageLog(logging.getLogger("test.remind"), "Sweep", remind_every=0)
    caplog.set_level(logging.WARNING, logger="test.remind")
    log.failed("down")
    log.failed("still down")
    assert lines(caplog, logging.WARNING)[1].startswith("Sweep still fails after")


def test_quieter_holds_back_a_reconnection_loop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger("test.quieter")
    quieter = outages.Quieter(period=3600)
    logger.addFilter(quieter)
    caplog.set_level(logging.INFO, logger="test.quieter")
    try:
        for attempt in range(10):
            logger.error("AMQP server unreachable, retry %d", attempt)
        logger.info("Reconnected to AMQP server")  # recovery resets it
        logger.error("AMQP server unreachable again")
        logger.error("AMQP server unreachable again and again")
    finally:
        logger.removeFilter(quieter)
    assert [r.getMessage() for r in caplog.records] == [
        "AMQP server unreachable, retry 0",
        "Reconnected to AMQP server",
        "AMQP server unreachable again",
    ]


def test_quieter_is_not_reset_by_the_heartbeat_s_reconnection_tries(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """oslo.messaging's heartbeat thread says at INFO that it tries to
    reconnect before each ERROR of an API process's idle connection: only
    a "Reconnected" line ends the outage."""
    logger = logging.getLogger("test.heartbeat")
    quieter = outages.Quieter(period=3600)
    logger.addFilter(quieter)
    caplog.set_level(logging.INFO, logger="test.heartbeat")
    try:
        for _ in range(4):
            logger.info(
                "A recoverable connection/channel error occurred, trying to "
                "reconnect: [Errno 111] Connection refused"
            )
            logger.error("Connection failed: [Errno 111] ECONNREFUSED")
        logger.info("[abc] Reconnected to AMQP server on 127.0.0.1:5672")
        logger.error("Connection failed: [Errno 111] ECONNREFUSED")
    finally:
        logger.removeFilter(quieter)
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == ["Connection failed: [Errno 111] ECONNREFUSED"] * 2


def test_an_outage_is_logged_with_the_first_line_of_its_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = outages.OutageLog(logging.getLogger("test.first-line"), "Renewing")
    with caplog.at_level(logging.WARNING):
        log.failed(RuntimeError("refused\n[SQL: SELECT 1]"))
    assert caplog.messages == ["Renewing failed: refused; retrying quietly"]
