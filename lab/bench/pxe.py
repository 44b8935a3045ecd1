"""The PXE filter's costs as the fleet grows: ``python -m lab bench-pxe``.

For each size (MACs Ironic knows) and each dnsmasq backend (one file per
MAC in a hostsdir, or one hosts file): the filter's own time to write the
whole filter, to apply one change, and to find nothing to do; and the CPU
a real dnsmasq (in a network namespace) spends re-reading it on SIGHUP.
"""

import dataclasses
import os
import pathlib
import random
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
from typing import Any

from lab.machines.dhcp import DhcpSegment, Dnsmasq

SIZES = (1_000, 10_000, 50_000)


def _macs(count: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    found: set[str] = set()
    while len(found) < count:
        found.add("52:54:" + ":".join(f"{rng.randrange(256):02x}" for _ in range(4)))
    return sorted(found)


def _cpu_seconds(pid: int) -> float:
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    return ticks / 100.0


def _reload_cpu(server: Dnsmasq) -> float:
    """dnsmasq's CPU seconds to act on one SIGHUP (until it goes idle)."""
    pid = server.pid()
    assert pid is not None
    before = _cpu_seconds(pid)
    os.kill(pid, signal.SIGHUP)
    last, still = _cpu_seconds(pid), 0
    while still < 5:  # 0.5 s without CPU: done
        time.sleep(0.1)
        now = _cpu_seconds(pid)
        still = still + 1 if now == last else 0
        last = now
    return last - before


@dataclasses.dataclass
class Row:
    backend: str
    macs: int
    full_write_s: float
    one_change_ms: float
    no_change_ms: float
    dnsmasq_reload_cpu_s: float

    def line(self) -> str:
        return (
            f"{self.backend:<10} {self.macs:>7} {self.full_write_s:>12.2f} "
            f"{self.one_change_ms:>13.1f} {self.no_change_ms:>12.1f} "
            f"{self.dnsmasq_reload_cpu_s:>18.2f}"
        )


HEADER = (
    f"{'backend':<10} {'MACs':>7} {'full write s':>12} {'one change ms':>13} "
    f"{'no change ms':>12} {'dnsmasq reload CPU s':>18}"
)


def measure(backend: str, count: int, work: pathlib.Path) -> Row:
    from inspector.pxe_filter import policy
    from inspector.pxe_filter.dnsmasq import HostsDir
    from inspector.pxe_filter.hostsfile import HostsFile

    macs = _macs(count)
    known = frozenset(macs)
    with DhcpSegment(
        work / f"{backend}-{count}", hostsfile=backend == "hostsfile"
    ) as seg:
        server = seg.servers[0]
        target: Any
        if backend == "hostsfile":
            target = HostsFile(str(server.hostsfile), str(server.pid_file))
        else:
            target = HostsDir(str(server.hostsdir), True, str(server.pid_file))
        target.prepare()
        started = time.perf_counter()
        target.apply(policy.decide(frozenset(), known, False, False, False))
        full = time.perf_counter() - started
        subprocess.run(server.start_command(), shell=True, check=True, timeout=60)
        time.sleep(1)
        reload_cpu = _reload_cpu(server)
        changes = []
        for mac in macs[:5]:  # one node starts: one entry flips
            started = time.perf_counter()
            target.apply(policy.decide(frozenset({mac}), known, True, False, False))
            changes.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        target.apply(policy.decide(frozenset({macs[4]}), known, True, False, False))
        idle = (time.perf_counter() - started) * 1000
    return Row(backend, count, full, statistics.median(changes), idle, reload_cpu)


def run(sizes: tuple[int, ...] = SIZES) -> list[Row]:
    work = pathlib.Path(tempfile.mkdtemp(prefix="inspector-pxe-bench-"))
    rows = []
    try:
        print(HEADER, flush=True)
        for count in sizes:
            for backend in ("hostsdir", "hostsfile"):
                rows.append(measure(backend, count, work))
                print(rows[-1].line(), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return rows
