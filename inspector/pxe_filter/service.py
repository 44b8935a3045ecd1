"""Keeps the PXE filter in step with the database and Ironic.

Two loops on one thread:

- every :data:`WATCH_INTERVAL` seconds, the MACs under introspection are
  read from the database (two indexed queries): a start, abort, finish,
  error or timeout reaches the filter within about a second;
- every ``[pxe_filter]sync_period`` seconds, a repair sync also lists
  Ironic's port addresses (one paginated listing) to learn new and deleted
  ports.

Only changed entries are written. When the database or Ironic has not
answered for longer than ``sync_period``, the filter fails closed for new
boots: every deny stays, unknown MACs are denied, until they answer again.
dnsmasq is started (``dnsmasq_start_command``) only after the first
complete sync, so it never answers from an empty directory.
"""

import logging
import shlex
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from oslo_config import cfg

from inspector import exceptions
from inspector.db import pxe
from inspector.outages import OutageLog
from inspector.pxe_filter import policy
from inspector.pxe_filter.backend import FilterBackend
from inspector.pxe_filter.dnsmasq import HostsDir

LOG = logging.getLogger(__name__)

WATCH_INTERVAL = 0.5
"""Seconds between two reads of the MACs under introspection."""

REPORT_INTERVAL = 2.0
"""Seconds between two status reports to the database (the pxe_filters
table: ``GET /v1/pxe-filters``, ``ironic-inspector-manage pxe-filter``)."""

COMMAND_TIMEOUT = 60.0


class PortAddresses(Protocol):
    """Where the filter learns every port's MAC (the Ironic client)."""

    def list_port_addresses(self) -> set[str]:
        """Every port's address, lower case.

        :raises InspectorError: no answer.
        """
        ...


class PxeFilterSync:
    """Keeps one process's PXE filter backend in step with the database
    and Ironic (``ironic-inspector``, ``ironic-inspector-pxe-filter``)."""

    def __init__(
        self,
        conf: cfg.ConfigOpts,
        db: Any,
        baremetal: PortAddresses,
        report: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.conf = conf
        self._clock = clock
        """Seconds for the repair schedule and outage lengths (tests fake it)."""
        self.host = str(conf.host)
        self.report = report
        """Report the status to the database (off in unit tests)."""
        self.generation = 0
        """How many times entries were written since the start."""
        self.last_watch: float | None = None
        """time.time() of the last successful read of the database."""
        self.db = db
        self.baremetal = baremetal
        self.driver = str(conf.pxe_filter.driver)
        self.backend = backend_of(conf)
        self.sync_period = float(conf.pxe_filter.sync_period)
        self.discovery = bool(conf.processing.node_not_found_hook)
        self.deny_unknown = bool(conf.pxe_filter.deny_unknown_macs)
        self.known: frozenset[str] | None = None
        """Ironic's port MACs at the last repair sync (None: none yet)."""
        self.applied: tuple[frozenset[str], bool, bool] | None = None
        self.last_sync: float | None = None
        """time.time() of the last complete sync."""
        self._failing: dict[str, float] = {}
        """Source (the database, Ironic) -> since when it has failed."""
        self.closed = False
        """Failing closed: the source of truth has been away too long."""
        self.dnsmasq_started = False
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="pxe-filter", daemon=True
        )
        self._outage = OutageLog(LOG, "Synchronising the PXE filter")

    # start and stop

    def start(self) -> None:
        """Check the directory, sync once, start dnsmasq, then keep syncing.

        :raises ConfigError: the hostsdir is unusable or the start command
            fails (named); an unreachable Ironic only delays dnsmasq's start.
        """
        self.backend.check()
        try:
            self.backend.prepare()
        except OSError as exc:
            raise exceptions.ConfigError(
                f"Invalid configuration: the PXE filter's {self.backend.path}: "
                f"{exc.strerror or exc}"
            ) from exc
        if self._repair():
            self._start_dnsmasq()
        else:
            LOG.warning(
                "PXE filter: the first sync did not complete; dnsmasq is "
                "started once it does (dnsmasq_start_command)"
            )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(10)
        command = self.conf.dnsmasq_pxe_filter.dnsmasq_stop_command
        if command and self.dnsmasq_started and self.driver == "dnsmasq":
            try:
                _execute(command, "dnsmasq_stop_command")
            except exceptions.ConfigError as exc:
                LOG.error("PXE filter: %s", exc)

    def _start_dnsmasq(self) -> None:
        command = self.conf.dnsmasq_pxe_filter.dnsmasq_start_command
        if command and self.driver == "dnsmasq":
            _execute(command, "dnsmasq_start_command")
            LOG.info("PXE filter: dnsmasq started (dnsmasq_start_command)")
        self.dnsmasq_started = True

    # the loops

    def _run(self) -> None:
        next_repair = self._clock() + (self.sync_period or float("inf"))
        next_report = self._clock()
        while not self._stop.wait(WATCH_INTERVAL):
            try:
                if self.report and self._clock() >= next_report:
                    next_report = self._clock() + REPORT_INTERVAL
                    if self._report():
                        next_repair = 0.0  # an operator asked for a sync
                if not self.dnsmasq_started or self._clock() >= next_repair:
                    if self._repair() and not self.dnsmasq_started:
                        self._start_dnsmasq()
                    next_repair = self._clock() + (self.sync_period or float("inf"))
                else:
                    self._watch()
            except exceptions.ConfigError as exc:  # the start command failed
                LOG.error("PXE filter: %s; trying again", exc)
            except Exception:  # the filter's thread must never die
                LOG.exception("PXE filter: unexpected failure; trying again")

    def _report(self) -> bool:
        """Store the status; whether an operator asked for a sync."""
        try:
            requested = pxe.report(self.db, self.host, self.driver, self.status())
        except exceptions.InspectorError as exc:
            LOG.debug("PXE filter: could not report its status: %s", exc)
            return False
        if requested:
            LOG.info("PXE filter: a repair sync was requested")
        return requested

    def _repair(self) -> bool:
        """A complete sync (database and Ironic); whether it completed."""
        started = time.monotonic()
        try:
            known = frozenset(self.baremetal.list_port_addresses())
        except exceptions.InspectorError as exc:
            self._lost("Ironic", exc)
            return False
        self._good("Ironic")
        try:
            booting, active = pxe.booting(self.db)
        except exceptions.InspectorError as exc:
            self._lost("the database", exc)
            return False
        self._good("the database")
        self.last_watch = time.time()
        self.known = known
        changed = self._apply(booting, active, force=True)
        changed += self.backend.compact()
        self.last_sync = time.time()
        LOG.debug(
            "PXE filter: repair sync of %d Ironic MACs, %d under introspection, "
            "%d entries written in %.0f ms",
            len(known),
            len(booting),
            changed,
            (time.monotonic() - started) * 1000,
        )
        return True

    def _watch(self) -> None:
        """The fast path: only the database, only when something changed."""
        try:
            booting, active = pxe.booting(self.db)
        except exceptions.InspectorError as exc:
            self._lost("the database", exc)
            return
        self._good("the database")
        self.last_watch = time.time()
        self._apply(booting, active)

    def _apply(self, booting: frozenset[str], active: bool, force: bool = False) -> int:
        key = (booting, active, self.closed)
        if key == self.applied and not force:
            return 0
        desired = policy.decide(
            booting,
            self.known or frozenset(),
            introspecting=active,
            discovery=self.discovery,
            deny_unknown=self.deny_unknown,
            fail_closed=self.closed,
        )
        changed = self.backend.apply(desired)
        self.applied = key
        if changed:
            self.generation += 1
            allowed, denied = self.backend.counts()
            LOG.info(
                "PXE filter: %d entries changed; %d MACs allowed, %d denied, "
                "unknown MACs %s",
                changed,
                allowed,
                denied,
                "allowed" if desired.unknown_allowed else "denied",
            )
        return changed

    # failing closed

    def _lost(self, source: str, exc: Exception) -> None:
        cause = f"{source}: {exc}"
        self._outage.failed(cause)
        now = self._clock()
        since = self._failing.setdefault(source, now)
        if self.closed or now - since < max(self.sync_period, WATCH_INTERVAL * 3):
            return
        LOG.warning(
            "PXE filter: no answer from %s for %.0f s (%s): failing closed, "
            "denying unknown MACs and keeping every deny until it answers",
            source,
            now - since,
            exc,
        )
        booting = self.applied[0] if self.applied else frozenset()
        self.backend.apply(
            policy.decide(
                booting,
                self.known or frozenset(),
                introspecting=False,
                discovery=False,
                deny_unknown=True,
                fail_closed=True,
            )
        )
        if self.applied is not None:
            self.applied = (self.applied[0], self.applied[1], True)
        # set last: whoever sees the flag (status, tests) sees the denies written
        self.closed = True

    def _good(self, source: str) -> None:
        self._failing.pop(source, None)
        if self._failing:
            return
        self._outage.ok()
        if self.closed:
            self.closed = False
            LOG.info("PXE filter: its sources answer again; no longer failing closed")

    def status(self) -> dict[str, Any]:
        allowed, denied = self.backend.counts()
        return {
            "driver": self.driver,
            "backend": self.backend.path,
            "generation": self.generation,
            "last_watch": self.last_watch,
            "last_sync": self.last_sync,
            "allowed": allowed,
            "denied": denied,
            "unknown_allowed": self.backend.unknown,
            "failing_closed": self.closed,
            "dnsmasq_started": self.dnsmasq_started,
        }


def backend_of(conf: cfg.ConfigOpts) -> FilterBackend:
    """The backend ``[pxe_filter]driver`` names (dnsmasq or iptables)."""
    if conf.pxe_filter.driver == "iptables":
        from inspector.pxe_filter.iptables import Chain

        opts = conf.iptables
        return Chain(opts.dnsmasq_interface, opts.firewall_chain, opts.ip_version)
    dnsmasq = conf.dnsmasq_pxe_filter
    if dnsmasq.dhcp_hostsfile:
        from inspector.pxe_filter.hostsfile import HostsFile

        return HostsFile(dnsmasq.dhcp_hostsfile, dnsmasq.dnsmasq_pid_file)
    return HostsDir(
        dnsmasq.dhcp_hostsdir, dnsmasq.purge_dhcp_hostsdir, dnsmasq.dnsmasq_pid_file
    )


def _execute(command: str, option: str) -> None:
    """Run ``command`` through the shell (ironic-inspector's meaning).

    :raises ConfigError: it failed, naming the option and its output.
    """
    try:
        done = subprocess.run(
            command,
            shell=True,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise exceptions.ConfigError(
            f"[dnsmasq_pxe_filter]{option} did not finish within "
            f"{COMMAND_TIMEOUT:.0f} s: {shlex.quote(command)}"
        ) from None
    if done.returncode != 0:
        output = (done.stderr or done.stdout).strip().splitlines()
        raise exceptions.ConfigError(
            f"[dnsmasq_pxe_filter]{option} failed with exit status "
            f"{done.returncode}: {output[-1] if output else '(no output)'}"
        )
