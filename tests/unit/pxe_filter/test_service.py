"""The PXE filter's loops: start order, fast path, repair, failing closed."""

import logging
import pathlib
import time
from collections.abc import Iterator
from typing import Any

import pytest
from oslo_config import cfg

from inspector import exceptions
from inspector.conf import opts
from inspector.pxe_filter import service
from inspector.pxe_filter.dnsmasq import UNKNOWN_HOSTS_FILE

A, B, C = (f"52:54:00:00:00:0{n}" for n in range(1, 4))


class Truth:
    """Stands in for the database and Ironic."""

    def __init__(self) -> None:
        self.booting: frozenset[str] = frozenset()
        self.known: set[str] = {A, B}
        self.db_down = False
        self.ironic_down = False
        self.listings = 0

    def list_port_addresses(self) -> set[str]:
        self.listings += 1
        if self.ironic_down:
            raise exceptions.BaremetalError("Ironic is away")
        return set(self.known)

    def read(self, _db: Any) -> tuple[frozenset[str], bool]:
        if self.db_down:
            raise exceptions.DatabaseUnavailable(reason="gone")
        return self.booting, bool(self.booting)


@pytest.fixture
def truth(monkeypatch: pytest.MonkeyPatch) -> Truth:
    found = Truth()
    monkeypatch.setattr(service.pxe, "booting", found.read)
    monkeypatch.setattr(service, "WATCH_INTERVAL", 0.05)
    return found


def make_conf(tmp_path: pathlib.Path, **dnsmasq: Any) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    conf([], project="ironic-inspector", default_config_files=[])
    conf.set_override("driver", "dnsmasq", group="pxe_filter")
    conf.set_override("sync_period", 1, group="pxe_filter")
    conf.set_override("dhcp_hostsdir", str(tmp_path / "hosts"), "dnsmasq_pxe_filter")
    for name, value in dnsmasq.items():
        conf.set_override(name, value, group="dnsmasq_pxe_filter")
    (tmp_path / "hosts").mkdir(exist_ok=True)
    return conf


@pytest.fixture
def running() -> Iterator[list[service.PxeFilterSync]]:
    started: list[service.PxeFilterSync] = []
    yield started
    for each in started:
        each.stop()


def entry(tmp_path: pathlib.Path, name: str) -> str | None:
    path = tmp_path / "hosts" / name
    return path.read_text().strip() if path.exists() else None


def wait_for(predicate: Any, timeout: float = 5) -> float:
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < timeout, "not within the time"
        time.sleep(0.01)
    return time.monotonic() - started


def test_dnsmasq_starts_after_the_first_sync(
    tmp_path: pathlib.Path, truth: Truth, running: list[service.PxeFilterSync]
) -> None:
    seen = tmp_path / "seen-at-start"
    conf = make_conf(
        tmp_path,
        dnsmasq_start_command=f"ls {tmp_path / 'hosts'} > {seen}",
        dnsmasq_stop_command=f"touch {tmp_path / 'stopped'}",
    )
    pxe = service.PxeFilterSync(conf, None, truth, report=False)
    pxe.start()
    running.append(pxe)
    assert sorted(seen.read_text().split()) == sorted([A, B, UNKNOWN_HOSTS_FILE])
    assert entry(tmp_path, A) == f"{A},ignore"
    pxe.stop()
    assert (tmp_path / "stopped").exists()


def test_without_ironic_dnsmasq_waits_for_a_complete_sync(
    tmp_path: pathlib.Path,
    truth: Truth,
    running: list[service.PxeFilterSync],
    caplog: pytest.LogCaptureFixture,
) -> None:
    truth.ironic_down = True
    conf = make_conf(tmp_path, dnsmasq_start_command=f"touch {tmp_path / 'up'}")
    pxe = service.PxeFilterSync(conf, None, truth, report=False)
    pxe.start()  # the service starts; dnsmasq does not, yet
    running.append(pxe)
    assert not (tmp_path / "up").exists() and not pxe.dnsmasq_started
    assert (
        "PXE filter: the first sync did not complete; dnsmasq is started once "
        "it does (dnsmasq_start_command)"
    ) in caplog.text
    truth.ironic_down = False
    wait_for(lambda: (tmp_path / "up").exists())
    assert entry(tmp_path, B) == f"{B},ignore"


def test_a_failing_start_command_names_the_option(
    tmp_path: pathlib.Path, truth: Truth
) -> None:
    conf = make_conf(tmp_path, dnsmasq_start_command="echo no dnsmasq here >&2; exit 3")
    pxe = service.PxeFilterSync(conf, None, truth, report=False)
    with pytest.raises(exceptions.ConfigError) as caught:
        pxe.start()
    assert str(caught.value) == (
        "[dnsmasq_pxe_filter]dnsmasq_start_command failed with exit status 3: "
        "no dnsmasq here"
    )


def test_changes_reach_the_filter_without_a_repair(
    tmp_path: pathlib.Path, truth: Truth, running: list[service.PxeFilterSync]
) -> None:
    conf = make_conf(tmp_path)
    conf.set_override("sync_period", 0, group="pxe_filter")  # repairs off
    pxe = service.PxeFilterSync(conf, None, truth, report=False)
    pxe.start()
    running.append(pxe)
    listings = truth.listings
    truth.booting = frozenset({A})
    # one change writes the MAC's file, then the wildcard's: wait for both
    took = wait_for(
        lambda: (
            entry(tmp_path, A) == A
            and entry(tmp_path, UNKNOWN_HOSTS_FILE) == "*:*:*:*:*:*"
        )
    )
    truth.booting = frozenset()
    wait_for(
        lambda: (
            entry(tmp_path, A) == f"{A},ignore"
            and entry(tmp_path, UNKNOWN_HOSTS_FILE) == "*:*:*:*:*:*,ignore"
        )
    )
    assert truth.listings == listings  # the fast path never lists Ironic
    assert took < 1


def test_repair_learns_new_and_deleted_ports(
    tmp_path: pathlib.Path, truth: Truth, running: list[service.PxeFilterSync]
) -> None:
    pxe = service.PxeFilterSync(make_conf(tmp_path), None, truth, report=False)
    pxe.start()
    running.append(pxe)
    truth.known = {A, C}  # B's port deleted, C's enrolled
    wait_for(lambda: entry(tmp_path, C) == f"{C},ignore", timeout=3)
    assert entry(tmp_path, B) == f"{B},ignore"  # unknown now: denied (idle)
    truth.booting = frozenset({A})  # an introspection runs: unknown allowed
    wait_for(lambda: entry(tmp_path, B) == B)


def test_fails_closed_when_the_source_of_truth_is_lost(
    tmp_path: pathlib.Path,
    truth: Truth,
    running: list[service.PxeFilterSync],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="inspector.pxe_filter.service")
    truth.booting = frozenset({A})
    pxe = service.PxeFilterSync(make_conf(tmp_path), None, truth, report=False)
    pxe.start()
    running.append(pxe)
    assert entry(tmp_path, UNKNOWN_HOSTS_FILE) == "*:*:*:*:*:*"
    truth.db_down = True
    # after sync_period (1 s): unknown MACs denied, every deny kept
    wait_for(lambda: pxe.closed, timeout=4)
    assert entry(tmp_path, UNKNOWN_HOSTS_FILE) == "*:*:*:*:*:*,ignore"
    assert entry(tmp_path, B) == f"{B},ignore"
    assert pxe.status()["failing_closed"] is True
    assert "PXE filter: no answer from the database for 1 s" in caplog.text
    assert (
        "failing closed, denying unknown MACs and keeping every deny until it answers"
    ) in caplog.text
    truth.db_down = False
    wait_for(lambda: not pxe.closed, timeout=4)
    assert (
        "PXE filter: its sources answer again; no longer failing closed"
    ) in caplog.text
    wait_for(lambda: entry(tmp_path, UNKNOWN_HOSTS_FILE) == "*:*:*:*:*:*")


def test_a_short_outage_does_not_close_and_ironic_alone_can(
    tmp_path: pathlib.Path, truth: Truth, running: list[service.PxeFilterSync]
) -> None:
    conf = make_conf(tmp_path)
    conf.set_override("sync_period", 2, group="pxe_filter")
    truth.booting = frozenset({A})
    pxe = service.PxeFilterSync(conf, None, truth, report=False)
    pxe.start()
    running.append(pxe)
    truth.db_down = True
    time.sleep(1.0)  # shorter than sync_period
    truth.db_down = False
    time.sleep(0.3)
    assert not pxe.closed
    truth.ironic_down = True  # the database answers, Ironic does not
    wait_for(lambda: pxe.closed, timeout=8)
    assert entry(tmp_path, UNKNOWN_HOSTS_FILE) == "*:*:*:*:*:*,ignore"
    assert entry(tmp_path, A) == A  # the node already booting keeps booting
    truth.ironic_down = False
    wait_for(lambda: not pxe.closed, timeout=5)
