"""The process and reapply steps: the stored ramdisk data through the hooks
and rules into Ironic (:mod:`inspector.conductor.outcome`)."""

import logging

from inspector import states
from inspector.conductor import outcome
from inspector.conductor.work import fence
from inspector.db import stored_data
from inspector.db.introspections import Introspection
from inspector.processing.base import ProcessingHook
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)


def run(rt: Runtime, hooks: list[ProcessingHook], record: Introspection) -> None:
    """Process the raw data stored for ``record`` and finish it. A reapply
    (``reapplying``) never powers the node off: it was not booted."""
    raw = stored_data.get(rt.db, record.uuid, processed=False)
    fence(rt, record)
    power_off = (
        record.state == states.PROCESSING
        and record.manage_boot
        and rt.conf.processing.power_off
    )
    LOG.debug(
        "Processing the data of node %s with hooks %s (power off after: %s)",
        record.uuid,
        ", ".join(h.name for h in hooks),
        power_off,
    )
    done = outcome.process(rt, hooks, record, raw, power_off)
    outcome.finish(rt, record, done)
