"""The process and reapply steps: the stored ramdisk data through the hooks
and rules into Ironic (:mod:`inspector.conductor.outcome`).

The ramdisk's ``logs`` come in with its data (the API stores the post as
it is, the hand-over to a conductor); processing takes them out first,
stores the data again without them, and writes them to
``[processing]ramdisk_logs_dir`` when they are due
(:mod:`inspector.processing.ramdisk_logs`)."""

import logging
from typing import Any

from inspector import exceptions, faults, states
from inspector.conductor import outcome
from inspector.db import stored_data
from inspector.db.introspections import IntrospectionRecord
from inspector.processing import ramdisk_logs
from inspector.processing.base import ProcessingHook
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)


def _take_logs(
    rt: Runtime, record: IntrospectionRecord, raw: dict[str, Any]
) -> ramdisk_logs.Held:
    """Take ``logs`` out of ``raw`` and out of the stored raw data, at once:
    a redelivered or taken-over step finds them gone and writes nothing."""
    had_logs = ramdisk_logs.FIELD in raw
    logs = ramdisk_logs.take(raw)
    if had_logs:
        stored_data.store(rt.db, record.uuid, raw, processed=False)
    if record.state != states.PROCESSING:
        # a reapply is no boot of the ramdisk: ironic-inspector writes no logs
        logs = None
    return ramdisk_logs.Held(rt.conf, raw, record.uuid, logs)


def run(rt: Runtime, hooks: list[ProcessingHook], record: IntrospectionRecord) -> None:
    """Process the raw data stored for ``record`` and finish it. A reapply
    (``reapplying``) never powers the node off: it was not booted."""
    # the fence of this step in the same statement: is the work still ours?
    raw = stored_data.get_fenced(rt.db, record.uuid, record.version, processed=False)
    logs = _take_logs(rt, record, raw)
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
    try:
        done = outcome.process(rt, hooks, record, raw, power_off)
        faults.at("applied", record.state, uuid=record.uuid)
        # before the state says finished: a client that sees it finds the file
        logs.settle(failed=False)
        outcome.finish(rt, record, done)
    except exceptions.StaleState:
        logs.settle(failed=False)  # no longer ours to judge; the error field is
        raise
    except BaseException:
        logs.settle(failed=True)
        raise
