"""Where the integration tests' CPU goes: per test, the CPU seconds of every
process the test run started (the session's Ironic and PostgreSQL apart).

Off unless ``INSPECTOR_TEST_CPU`` names a directory; each test process then
appends one JSON line per test to ``cpu-<worker>.jsonl`` there, read by
``python -m tools.test_cpu`` (doc/testing.md). A test's line covers its
set-up, call and tear-down, so a module's servers count where they start
and stop.
"""

import json
import os
import pathlib
import time
from collections.abc import Callable, Generator

import pytest

from lab import procstat

ENV = "INSPECTOR_TEST_CPU"
PLUGIN = "inspector_cpu_ledger"


class CpuLedger:
    """Reads the CPU of the test process's tree before and after each test."""

    def __init__(self, directory: pathlib.Path, worker: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"cpu-{worker}.jsonl"
        self.servers: dict[str, Callable[[], int | None]] = {}
        self.stopped: dict[str, float] = {}
        """Last readings of servers stopped since the test began."""

    def reading(self) -> dict[str, float]:
        """CPU seconds so far: each server's (its PID in the key: a server
        restarted during a test counts from zero, the CPU of its ended
        process stays in ``all``), the test process's own, and ``all``."""
        me = os.getpid()
        found = {}
        for name, pid_of in self.servers.items():
            pid = pid_of()
            if pid:  # not while it is stopped (an outage)
                found[f"{name}:{pid}"] = procstat.lifetime_cpu_seconds(pid)
        found.update(self.stopped)
        found["pytest"] = procstat.own_cpu_seconds(me)
        found["all"] = procstat.lifetime_cpu_seconds(me)
        return found

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, object, object]:
        before, started = self.reading(), time.monotonic()
        try:
            return (yield)
        finally:
            after = self.reading()
            self.stopped.clear()
            row: dict[str, object] = {
                "test": item.nodeid,
                "wall": round(time.monotonic() - started, 2),
            }
            for key, value in after.items():
                # a server started during this test counts from zero
                name = key.split(":")[0]
                row[name] = round(value - before.get(key, 0.0), 2)
            with open(self.path, "a") as out:
                out.write(json.dumps(row) + "\n")


def install(config: pytest.Config) -> None:
    """Registers the ledger when ``INSPECTOR_TEST_CPU`` is set."""
    directory = os.environ.get(ENV)
    if directory and not config.pluginmanager.has_plugin(PLUGIN):
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        config.pluginmanager.register(
            CpuLedger(pathlib.Path(directory), worker), PLUGIN
        )


def unwatch(config: pytest.Config, name: str) -> None:
    """Takes a last reading of ``name`` before it stops for good (the
    session's servers stop in the last test's tear-down)."""
    ledger = config.pluginmanager.get_plugin(PLUGIN)
    if isinstance(ledger, CpuLedger) and name in ledger.servers:
        pid = ledger.servers.pop(name)()
        if pid:
            key = f"{name}:{pid}"
            ledger.stopped[key] = procstat.lifetime_cpu_seconds(pid)


def watch(config: pytest.Config, name: str, pid_of: Callable[[], int | None]) -> None:
    """Counts the tree of the process ``pid_of()`` names apart, as ``name``,
    from now on (asked at each reading: a restarted server has a new PID)."""
    ledger = config.pluginmanager.get_plugin(PLUGIN)
    if isinstance(ledger, CpuLedger):
        ledger.servers[name] = pid_of
