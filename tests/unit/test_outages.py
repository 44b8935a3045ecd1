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


def test_cause_is_one_line() -> None:
    assert outages.cause_of(RuntimeError("first\nsecond")) == "first"
    assert outages.cause_of(ConnectionError()) == "ConnectionError"
