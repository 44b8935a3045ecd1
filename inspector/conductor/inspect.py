"""How a run's start step learns a node's hardware: the :class:`Inspect`
protocol, one implementation per way, chosen by the run's mode.

- in-band (:class:`inspector.conductor.in_band.InBand`): boot the ramdisk;
  the answer is to wait for its post;
- out of band or ``auto`` (:mod:`inspector.conductor.out_of_band`): ask the
  node's BMC, through sushy or through Ironic's own ``redfish``
  inspection (``[redfish]engine``); the answer is the data, or, in
  ``auto`` when the BMC cannot tell enough, the ramdisk booted and what
  the BMC told kept for the processing.

The start step (:mod:`inspector.conductor.start`) records the answer;
data makes processing the next step, which the work queue claims and runs.
Claiming, locking and failure stay in the work queue alone.
"""

import dataclasses
from typing import Any, Protocol

from inspector import states
from inspector.db.introspections import IntrospectionRecord


@dataclasses.dataclass(frozen=True)
class Answer:
    """What an :class:`Inspect` found: the data, or a wait for the ramdisk."""

    data: dict[str, Any] | None = None
    """The hardware as a ramdisk's post gives it: to be processed next."""
    bmc_data: dict[str, Any] | None = None
    """While waiting: what a BMC told a run of mode ``auto``, merged with
    the ramdisk's post by the processing."""


WAIT = Answer()
"""The ramdisk boots: its post is awaited."""


class Inspect(Protocol):
    def inspect(self, record: IntrospectionRecord) -> Answer:
        """Learn the hardware of ``record``'s node (under its lock, fenced
        before every action on the node).

        :raises InspectorError: the run fails, naming the cause.
        :raises StaleState: the step is no longer this conductor's.
        """


@dataclasses.dataclass(frozen=True)
class Inspectors:
    """The ways a conductor can learn a node's hardware."""

    in_band: Inspect
    bmc: Inspect
    """Out of band, and ``auto`` (which falls back to ``in_band``)."""

    def for_run(self, record: IntrospectionRecord) -> Inspect:
        """The way ``record``'s mode asks for (in-band is stored as None)."""
        if record.mode in (states.OUT_OF_BAND, states.AUTO):
            return self.bmc
        return self.in_band
