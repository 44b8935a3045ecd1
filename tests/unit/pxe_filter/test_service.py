"""The PXE filter's loops: start order, fast path, repair, failing closed."""

import logging
import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
from oslo_config import cfg

from inspector import exceptions
from inspector.conf import opts
from inspector.pxe_filter import service
from inspector.pxe_filter.dnsmasq import UNKNOWN_HOSTS_FILE
from lab.waiting import wait_until

A, B, C = (f"52:54:00:00:00:0{n}" for n in range(1, 4))


class Truth:
    """Stands in for the database and Ironic."""

    def __init__(self) -> None:
        self.booting: frozenset[str] = frozenset()
        self.known: set[str] = {A, B}
        self.db_down = False
        self.ironic_down = False
        self.listings = 0
        self.reads = 0

    def list_port_addresses(self) -> set[str]:
        self.listings += 1
        if self.ironic_down:
            raise exceptions.BaremetalError("Ironic is away")
        return set(self.known)

    def read(self, _db: Any) -> tuple[frozenset[str], bool]:
        self.reads += 1
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
    wait_until(lambda: (tmp_path / "up").exists(), 5, "dnsmasq to be started")
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
    wait_until(
        lambda: (entry(tmp_path, A), entry(tmp_path, UNKNOWN_HOSTS_FILE)),
        1,
        "A and unknown MACs allowed",
        until=lambda entries: entries == (A, "*:*:*:*:*:*"),
        interval=0.01,
    )
    truth.booting = frozenset()
    wait_until(
        lambda: (entry(tmp_path, A), entry(tmp_path, UNKNOWN_HOSTS_FILE)),
        5,
        "A and unknown MACs denied",
        until=lambda entries: entries == (f"{A},ignore", "*:*:*:*:*:*,ignore"),
        interval=0.01,
    )
    assert truth.listings == listings  # the fast path never lists Ironic


def test_repair_learns_new_and_deleted_ports(
    tmp_path: pathlib.Path, truth: Truth, running: list[service.PxeFilterSync]
) -> None:
    pxe = service.PxeFilterSync(make_conf(tmp_path), None, truth, report=False)
    pxe.start()
    running.append(pxe)
    truth.known = {A, C}  # B's port deleted, C's enrolled
    wait_until(lambda: entry(tmp_path, C), 3, "C denied", until=f"{C},ignore".__eq__)
    assert entry(tmp_path, B) == f"{B},ignore"  # unknown now: denied (idle)
    truth.booting = frozenset({A})  # an introspection runs: unknown allowed
    wait_until(lambda: entry(tmp_path, B), 5, "B allowed", until=B.__eq__)


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
    wait_until(lambda: pxe.closed, 4, "the filter to fail closed")
    assert entry(tmp_path, UNKNOWN_HOSTS_FILE) == "*:*:*:*:*:*,ignore"
    assert entry(tmp_path, B) == f"{B},ignore"
    assert pxe.status()["failing_closed"] is True
    assert "PXE filter: no answer from the database for 1 s" in caplog.text
    assert (
        "failing closed, denying unknown MACs and keeping every deny until it answers"
    ) in caplog.text
    truth.db_down = False
    wait_until(lambda: not pxe.closed, 4, "the filter to open again")
    assert (
        "PXE filter: its sources answer again; no longer failing closed"
    ) in caplog.text
    wait_until(
        lambda: entry(tmp_path, UNKNOWN_HOSTS_FILE),
        5,
        "unknown MACs allowed again",
        until="*:*:*:*:*:*".__eq__,
    )


class FakeClock:
    """The filter's clock, moved on by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_short_outage_does_not_close_and_ironic_alone_can(
    tmp_path: pathlib.Path, truth: Truth, running: list[service.PxeFilterSync]
) -> None:
    clock = FakeClock()
    conf = make_conf(tmp_path)
    conf.set_override("sync_period", 2, group="pxe_filter")
    truth.booting = frozenset({A})
    pxe = service.PxeFilterSync(conf, None, truth, report=False, clock=clock)
    pxe.start()
    running.append(pxe)

    def reads_after(count: int, what: str) -> None:
        # two more reads: one of them began after the change before it
        wanted = truth.reads + count
        wait_until(lambda: truth.reads, 5, what, until=lambda n: n >= wanted)

    truth.db_down = True
    reads_after(2, "the filter to find the database away")
    clock.now += 1.9  # shorter than sync_period
    reads_after(2, "the filter to find the database away 1.9 s later")
    assert not pxe.closed
    truth.db_down = False
    reads_after(2, "the filter to find the database back")
    clock.now += 1.9  # the outage is over: its start is forgotten...
    truth.db_down = True
    reads_after(2, "the filter to find the database away again")
    assert not pxe.closed  # ...so a new one is short too
    truth.db_down = False
    reads_after(2, "the filter to find the database back again")
    truth.ironic_down = True  # the database answers, Ironic does not
    listings = truth.listings
    clock.now += 2  # a repair sync finds Ironic away...
    wait_until(lambda: truth.listings > listings, 5, "a repair sync")
    # ...and has noted since when (the listing is asked before the failure
    # is noted: moving the clock in between made the outage start later)
    wait_until(lambda: "Ironic" in pxe._failing, 5, "the outage of Ironic noted")
    assert not pxe.closed
    clock.now += 2  # ...and the next, sync_period later, fails closed
    wait_until(lambda: pxe.closed, 5, "the filter to fail closed")
    assert entry(tmp_path, UNKNOWN_HOSTS_FILE) == "*:*:*:*:*:*,ignore"
    assert entry(tmp_path, A) == A  # the node already booting keeps booting
    truth.ironic_down = False
    clock.now += 2
    wait_until(lambda: not pxe.closed, 5, "the filter to open again")
