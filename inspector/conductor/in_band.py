"""In-band inspection: boot the node into the inspection ramdisk, whose
post then brings the data (:mod:`inspector.intake.ramdisk`)."""

import logging

from inspector import exceptions, faults
from inspector.conductor.fencing import fence
from inspector.conductor.inspect import WAIT, Answer
from inspector.conductor.power import PowerOnPacer
from inspector.db.introspections import IntrospectionRecord
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)


class InBand:
    """PXE as the next boot device and a reboot (when the service manages
    the boot), paced cluster-wide; then wait for the ramdisk."""

    def __init__(self, rt: Runtime, pacer: PowerOnPacer) -> None:
        self.rt = rt
        self.pacer = pacer

    def inspect(self, record: IntrospectionRecord) -> Answer:
        rt, uuid = self.rt, record.uuid
        if not record.manage_boot:
            LOG.info(
                "Node %s: boot is managed by the operator; waiting for the ramdisk",
                uuid,
            )
            return WAIT
        slept = self.pacer.wait()
        LOG.debug("Node %s got its power-on slot after %.2f s", uuid, slept)
        fence(rt, record)
        try:
            rt.baremetal.set_boot_device(uuid, "pxe", persistent=False)
        except exceptions.InspectorError as exc:
            raise exceptions.InspectorError(
                f"Failed to set boot device to PXE: {exc}"
            ) from exc
        fence(rt, record)
        try:
            rt.baremetal.set_power_state(uuid, "rebooting")
        except exceptions.InspectorError as exc:
            raise exceptions.InspectorError(
                f"Failed to power on the node: {exc}"
            ) from exc
        LOG.info("Node %s is booting into the introspection ramdisk", uuid)
        faults.at("powered", record.state, uuid)
        return WAIT
