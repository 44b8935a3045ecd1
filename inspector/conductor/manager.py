"""Server side of the conductor RPC API: thin entry points that queue the
step each cast asks for (:mod:`inspector.conductor.work_queue` claims it and
takes the node's lock), handing over to one workflow function per step:
:mod:`~inspector.conductor.start` (which asks the run's way of inspecting,
:mod:`~inspector.conductor.inspect`), :mod:`~inspector.conductor.processing`
(processing and reapplying), :mod:`~inspector.conductor.abort`; a step that
fails ends in :func:`inspector.conductor.filing.fail`. The periodic duties
are in :mod:`inspector.conductor.takeover` and
:mod:`inspector.conductor.timeouts`."""

import functools
import logging
from collections.abc import Callable, Collection
from typing import Any

import oslo_messaging as messaging

from inspector import states
from inspector.conductor import (
    abort,
    filing,
    processing,
    start,
    takeover,
    timeouts,
)
from inspector.conductor.in_band import InBand
from inspector.conductor.inspect import Inspectors
from inspector.conductor.out_of_band import Bmc
from inspector.conductor.power import PowerOnPacer
from inspector.conductor.rpcapi import RPC_API_VERSION
from inspector.conductor.work_queue import Step, WorkQueue
from inspector.hooks.base import ProcessingHook
from inspector.redfish.sessions import Sessions
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)


class ConductorManager:
    """RPC endpoint. Only the methods marked ``messaging.expose`` can be
    cast (the service uses ``ExplicitRPCAccessPolicy``). Every one is
    idempotent: a cast for a version that is no longer current (duplicate
    or stale delivery) is dropped."""

    target = messaging.Target(version=RPC_API_VERSION)

    def __init__(self, rt: Runtime, hooks: list[ProcessingHook]) -> None:
        self.rt = rt
        self.hooks = hooks
        self.pacer = PowerOnPacer(
            lambda: float(rt.conf.introspection_delay),
            rt.db,
            lambda: int(rt.conf.introspection_delay_burst),
        )
        self.sessions = Sessions(rt.conf)
        """Redfish sessions kept per BMC for out-of-band starts."""
        in_band = InBand(rt, self.pacer)
        self.inspectors = Inspectors(in_band, Bmc(rt, self.sessions, in_band))
        self.steps: dict[str, Step] = {
            states.STARTING: functools.partial(start.run, rt, self.inspectors.for_run),
            states.PROCESSING: functools.partial(processing.run, rt, hooks),
            states.REAPPLYING: functools.partial(processing.run, rt, hooks),
            states.ABORTING: functools.partial(abort.run, rt),
        }
        self.queue = WorkQueue(rt, filing.fail, self.steps)
        self.takeover = takeover.Takeover(rt, self.queue, self.steps)
        self.draining = False
        """Set when the conductor stops: the JSON-RPC endpoint refuses new
        calls (the API tries another conductor); work in progress goes on."""

    # RPC methods (ConductorClient in inspector.conductor.rpcapi casts them)

    @messaging.expose
    def start_introspection(
        self, ctxt: dict[str, Any], uuid: str, version: int, **_: Any
    ) -> None:
        """Boot the node into the ramdisk: PXE boot device, power on."""
        self._queue(uuid, version, states.STARTING)

    @messaging.expose
    def process(self, ctxt: dict[str, Any], uuid: str, version: int) -> None:
        """Process the stored ramdisk data and write the results to Ironic."""
        self._queue(uuid, version, states.PROCESSING)

    @messaging.expose
    def reapply(self, ctxt: dict[str, Any], uuid: str, version: int) -> None:
        """Re-run processing on the stored data; the node is not rebooted."""
        self._queue(uuid, version, states.REAPPLYING)

    @messaging.expose
    def abort(self, ctxt: dict[str, Any], uuid: str, version: int) -> None:
        """Power the node off and end its introspection as canceled."""
        self._queue(uuid, version, states.ABORTING)

    # periodic duties (the conductor service calls them)

    def sweep(self, alive: Callable[[], Collection[str]], leader: bool) -> int:
        """Find lost steps and resume them; returns how many were found."""
        return self.takeover.sweep(alive, leader)

    def check_timeouts(self) -> int:
        """End introspections running longer than [DEFAULT]timeout."""
        return timeouts.end_timed_out(self.rt)

    def stop(self, timeout: float | None = None) -> dict[str, str]:
        """Wait for work in progress (queued steps included) to finish, for
        at most ``timeout`` seconds; returns the steps left unfinished
        (node -> state)."""
        self.takeover.stop()
        return self.queue.stop(timeout)

    def _queue(self, uuid: str, version: int, state: str) -> None:
        LOG.debug("Cast for the %s step of node %s (version %s)", state, uuid, version)
        self.queue.submit(uuid, version, state, self.steps[state])
