"""The health checks: timeouts, one probe in flight, and what each reports."""

import socket
import threading
import types
from typing import Any

import pytest
from oslo_config import cfg

from inspector import exceptions
from inspector.api import health
from inspector.conf import opts, shape


@pytest.fixture
def conf() -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    conf([], default_config_files=[])
    return conf


def _with_runtime(conf: cfg.ConfigOpts, **fields: Any) -> None:
    fields.setdefault("conductors", None)
    health._runtimes[id(conf)] = types.SimpleNamespace(conf=conf, **fields)  # type: ignore[assignment]


class _Slow(health._Check):
    name = "slow"

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        super().__init__(conf, {})
        self.release = threading.Event()
        self.calls = 0

    def probe(self) -> tuple[bool, str]:
        self.calls += 1
        self.release.wait(10)
        return True, "done"


def test_a_hung_backend_fails_its_check_in_time(conf: cfg.ConfigOpts) -> None:
    conf.set_override("check_timeout", 0.2, group="healthcheck")
    check = _Slow(conf)
    result = check.healthcheck(80)
    assert not result.available
    assert result.reason == "slow: FAILED"
    assert result.details == "no answer within 0.2 s"
    # the hung probe is waited for again, not started a second time
    assert not check.healthcheck(80).available
    assert check.calls == 1
    check.release.set()
    ok = check.healthcheck(80)
    assert ok.available and ok.reason == "slow: OK"
    assert ok.details is not None and ok.details.startswith("done (")


def test_a_raising_probe_is_a_failed_check(conf: cfg.ConfigOpts) -> None:
    class Broken(health._Check):
        name = "broken"

        def probe(self) -> tuple[bool, str]:
            raise exceptions.ServiceUnavailable(reason="etcd is away")

    result = Broken(conf, {}).healthcheck(80)
    assert not result.available
    assert "etcd is away" in (result.details or "")


def _group(views: list[dict[str, Any]]) -> Any:
    """The service group as the check reads it: the live members (the
    backend alone) and the views with their states (database rows)."""
    return types.SimpleNamespace(
        alive=lambda: [v["hostname"] for v in views if v["alive"]],
        conductors=lambda with_work=True: views,
    )


def test_coordination_without_live_conductors(conf: cfg.ConfigOpts) -> None:
    conf.set_override("standalone", False)
    conf.set_override(
        "backend_url", "etcd3+http://u:pw@127.0.0.1:2379", group="coordination"
    )
    views: list[dict[str, Any]] = []
    group = _group(views)
    _with_runtime(conf, conductors=group)
    result = health.CoordinationCheck(conf, {}).healthcheck(80)
    assert not result.available
    assert "no conductor is a live member" in (result.details or "")
    assert "pw" not in (result.details or "")  # the password is not shown
    views.extend(
        {"hostname": h, "alive": True, "enabled": True} for h in ("c-1", "c-2")
    )
    result = health.CoordinationCheck(conf, {}).healthcheck(80)
    assert result.available and "2 conductor(s) alive: c-1, c-2" in (
        result.details or ""
    )


def test_coordination_reads_the_service_group(conf: cfg.ConfigOpts) -> None:
    conf.set_override("standalone", False)
    conf.set_override(
        "backend_url", "etcd3+http://127.0.0.1:2379", group="coordination"
    )
    views = [
        {"hostname": "c-1", "alive": True, "enabled": False},
        {"hostname": "c-2", "alive": False, "enabled": True},
    ]
    group = _group(views)
    _with_runtime(conf, conductors=group)
    result = health.CoordinationCheck(conf, {}).healthcheck(80)
    assert not result.available
    assert "every live conductor is disabled" in (result.details or "")
    views[0]["enabled"] = True
    result = health.CoordinationCheck(conf, {}).healthcheck(80)
    assert result.available and "1 conductor(s) alive: c-1" in (result.details or "")

    def away(with_work: bool = True) -> list[Any]:
        raise exceptions.ServiceUnavailable(reason="etcd is away")

    # the states are database rows: a database outage is the database
    # check's to report; the group answered, so this check holds
    group.conductors = away
    result = health.CoordinationCheck(conf, {}).healthcheck(80)
    assert result.available and "1 conductor(s) alive: c-1" in (result.details or "")
    assert "whether they are enabled is unknown" in (result.details or "")
    # the group itself away: this check fails, naming why
    group.alive = away
    result = health.CoordinationCheck(conf, {}).healthcheck(80)
    assert not result.available and "etcd is away" in (result.details or "")


def test_messaging_names_an_unreachable_broker(conf: cfg.ConfigOpts) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    shape.transport_url(conf)  # registers oslo.messaging's options
    conf.set_override("standalone", False)
    conf.set_override("transport_url", f"rabbit://guest:guest@127.0.0.1:{port}/")
    conf.set_override("check_timeout", 2, group="healthcheck")
    _with_runtime(conf)
    result = health.MessagingCheck(conf, {}).healthcheck(80)
    assert not result.available
    assert f"127.0.0.1:{port}" in (result.details or "")


def test_messaging_and_coordination_in_standalone(conf: cfg.ConfigOpts) -> None:
    _with_runtime(conf)
    assert health.MessagingCheck(conf, {}).healthcheck(80).available
    assert health.CoordinationCheck(conf, {}).healthcheck(80).available


def test_redacted() -> None:
    assert health._redacted("rabbit://u:secret@h:5672/") == "rabbit://u:***@h:5672/"
    assert health._redacted("etcd3+http://h:2379") == "etcd3+http://h:2379"
