"""The abort step: power the node off and end its introspection."""

import logging

from inspector.conductor import power
from inspector.conductor.fencing import fence
from inspector.db import hardware_runs, transitions
from inspector.db.introspections import IntrospectionRecord
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)


def run(rt: Runtime, record: IntrospectionRecord) -> None:
    """Power off (when the service manages the boot), then ``error`` with
    the canceled message, as ironic-inspector does."""
    if record.manage_boot:
        fence(rt, record)
        power.power_off(rt, record.uuid, "on abort")
    transitions.aborted(rt.db, record, hardware_runs.new_run(record.uuid))
    LOG.info("Introspection of node %s aborted", record.uuid)
