"""A ramdisk's post: find its introspection (or enroll it), store the data,
hand processing over to a conductor."""

import logging
import time
from typing import Any

from inspector import exceptions, states
from inspector.conductor.rpcapi import ConductorClient
from inspector.db import introspections
from inspector.intake import discovery, handover, lookup
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)

STARTING_GRACE = 5.0
"""Seconds a ramdisk post waits for a node still in ``starting`` to reach
``waiting`` (a very fast ramdisk can call back before the power-on returns)."""


def continue_(rt: Runtime, data: dict[str, Any]) -> str:
    """Accept a ramdisk's data: look the node up, store, hand over to process."""
    attributes = lookup.from_data(data)
    try:
        record = introspections.lookup(rt.db, attributes)
    except exceptions.NoMatch:
        if rt.conf.processing.node_not_found_hook != "enroll":
            _keep_logs_of_unknown(rt, data)
            raise
        record = discovery.enroll(rt, data, handover.claim_within(rt))
        handover.hand_over(rt, record, ConductorClient.process)
        return record.uuid
    deadline = time.monotonic() + STARTING_GRACE
    while record.state == states.STARTING and time.monotonic() < deadline:
        time.sleep(0.05)
        record = introspections.get(rt.db, record.uuid)
    if not states.allows(record.state, states.PROCESS):
        raise exceptions.InvalidTransition(state=record.state, event=states.PROCESS)
    record = introspections.transition(
        rt.db,
        record.uuid,
        states.PROCESS,
        claim_within=handover.claim_within(rt),
        expected_version=record.version,
        raw_data=data,
        current=record,
    )
    LOG.info("Received ramdisk data for node %s, processing", record.uuid)
    handover.hand_over(rt, record, ConductorClient.process)
    return record.uuid


def _keep_logs_of_unknown(rt: Runtime, data: dict[str, Any]) -> None:
    """Data that matches no node is answered 404 and never reaches a
    conductor: its logs are written here, named ``unknown``, as
    ironic-inspector does (a failed lookup is a failure), when this
    process has a ``[processing]ramdisk_logs_dir``."""
    if not rt.conf.processing.ramdisk_logs_dir or "logs" not in data:
        return
    # only on this failure path: the API does not load processing modules
    from inspector.processing import ramdisk_logs

    logs = ramdisk_logs.take(data)
    ramdisk_logs.write(rt.conf, data, None, logs)
