"""Plays the ramdisks of lab machines: boots seen in Ironic -> /v1/continue."""

import dataclasses
import logging
import random
import threading
import time
from collections.abc import Callable
from typing import Any

import requests

from lab.machines.enroll import IronicAPI
from lab.machines.hardware import Machine

LOG = logging.getLogger(__name__)


@dataclasses.dataclass
class Callback:
    """What happened to one ramdisk post."""

    machine: str
    booted_at: float
    posted_at: float = 0.0
    latency: float = 0.0
    status: int = 0
    attempts: int = 0
    answer: Any = None


def post_continue(
    url: str,
    payload: dict[str, Any],
    attempts: int = 5,
    session: requests.Session | None = None,
) -> tuple[int, Any, int, float]:
    """POST like ironic-python-agent: retry connection errors and 5xx with
    back-off, never 4xx. Returns (status, body, attempts, seconds of last try)."""
    http = session or requests.Session()
    delay = 0.2
    status, body, elapsed = 0, None, 0.0
    for attempt in range(1, attempts + 1):
        started = time.monotonic()
        try:
            resp = http.post(f"{url}/v1/continue", json=payload, timeout=30)
        except requests.RequestException as exc:
            elapsed = time.monotonic() - started
            status, body = 0, str(exc)
        else:
            elapsed = time.monotonic() - started
            status = resp.status_code
            try:
                body = resp.json()
            except ValueError:
                body = resp.text
            if status < 500:
                return status, body, attempt, elapsed
        if attempt < attempts:
            time.sleep(delay)
            delay = min(delay * 2, 5.0)
    return status, body, attempts, elapsed


class RamdiskPlayer:
    """Watches Ironic's power states and calls back for machines that boot.

    A machine whose node goes from powered off (or unknown) to powered on is
    treated as booted into the introspection ramdisk: after a random boot
    delay its payload is posted. ``silent`` machines never call back.
    """

    def __init__(
        self,
        ironic: IronicAPI,
        inspector_url: str,
        machines: list[Machine],
        boot_delay: tuple[float, float] = (0.2, 1.0),
        poll_interval: float = 0.2,
        seed: int = 0,
        dhcp: Callable[[Machine], str | None] | None = None,
        watch_recent: int | None = None,
    ) -> None:
        self.watch_recent = watch_recent
        """Watch only this many most recently updated nodes (a fleet)."""
        self.dhcp = dhcp
        """PXE first: ask for an address as the machine's PXE MAC (real DHCP
        through the filter); no address, no ramdisk, no callback."""
        self.leases: dict[str, str | None] = {}
        self.ironic = ironic
        self.inspector_url = inspector_url.rstrip("/")
        self.machines = {m.name: m for m in machines}
        self.boot_delay = boot_delay
        self.poll_interval = poll_interval
        self.callbacks: list[Callback] = []
        self._rng = random.Random(seed)
        self._power: dict[str, str | None] = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._watcher = threading.Thread(
            target=self._watch, name="ramdisk-watch", daemon=True
        )
        self._local = threading.local()

    def start(self) -> None:
        for node in self.ironic.nodes("name,power_state"):
            self._power[node["name"]] = node.get("power_state")
        self._watcher.start()

    def stop(self) -> None:
        self._stop.set()
        self._watcher.join(5)
        for thread in list(self._threads):
            thread.join(5)

    def _watch(self) -> None:
        while not self._stop.wait(self.poll_interval):
            try:
                nodes = self.ironic.nodes("name,power_state", self.watch_recent)
            except Exception as exc:  # Ironic restarting: keep watching
                LOG.warning("Cannot list Ironic nodes: %s", exc)
                continue
            for node in nodes:
                name, power = str(node.get("name")), node.get("power_state")
                before = self._power.get(name)
                self._power[name] = power
                if (
                    power == "power on"
                    and before != "power on"
                    and name in self.machines
                ):
                    self._booted(self.machines[name])

    def _booted(self, machine: Machine) -> None:
        if machine.behaviour == "silent":
            LOG.info("%s booted and stays silent", machine.name)
            return
        delay = self._rng.uniform(*self.boot_delay)
        thread = threading.Thread(
            target=self._call_back,
            args=(machine, time.monotonic(), delay),
            name=f"ramdisk-{machine.name}",
            daemon=True,
        )
        self._threads.append(thread)
        thread.start()

    def _call_back(self, machine: Machine, booted_at: float, delay: float) -> None:
        if self._stop.wait(delay):
            return
        if self.dhcp is not None:
            lease = None
            for _try in range(3):  # a PXE ROM asks a few times
                lease = self.dhcp(machine)
                if lease is not None:
                    break
            with self._lock:
                self.leases[machine.name] = lease
            if lease is None:
                LOG.warning("%s got no DHCP offer: it cannot boot", machine.name)
                return
        record = Callback(
            machine=machine.name, booted_at=booted_at, posted_at=time.monotonic()
        )
        status, body, attempts, elapsed = post_continue(
            self.inspector_url, machine.payload()
        )
        record.status, record.answer, record.attempts = status, body, attempts
        record.latency = elapsed
        with self._lock:
            self.callbacks.append(record)
        if status != 200:
            LOG.warning("%s: /v1/continue answered %s: %s", machine.name, status, body)

    def latencies(self) -> list[float]:
        with self._lock:
            return sorted(c.latency for c in self.callbacks if c.status == 200)
