"""The start step: boot the node into the inspection ramdisk."""

import logging
from typing import Any

from inspector import exceptions, faults
from inspector.conductor.fencing import fence
from inspector.conductor.power import PowerOnPacer
from inspector.db import transitions
from inspector.db.introspections import IntrospectionRecord
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)


def run(
    rt: Runtime,
    pacer: PowerOnPacer,
    record: IntrospectionRecord,
    bmc_data: dict[str, Any] | None = None,
) -> None:
    """PXE as the next boot device and a reboot (when the service manages
    the boot), paced cluster-wide; then wait for the ramdisk. ``bmc_data``
    is what a BMC told a run of mode ``auto`` that falls back to this
    (:mod:`inspector.conductor.out_of_band`), kept for the processing."""
    uuid = record.uuid
    if record.manage_boot:
        slept = pacer.wait()
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
    else:
        LOG.info(
            "Node %s: boot is managed by the operator; waiting for the ramdisk",
            uuid,
        )
    transitions.waiting(rt.db, record, bmc_data)
