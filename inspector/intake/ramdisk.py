"""A ramdisk's post: find its introspection (or enroll it), store the data,
hand processing over to a conductor.

The post is shaped here once: its ``logs`` come out on arrival and are kept
apart beside the data in the same transaction (or written at once when the
post matches no node); the data is serialised once, into the database.
"""

import logging
import time
from typing import Any

from inspector import exceptions, states
from inspector.conductor.rpcapi import ConductorClient
from inspector.db import introspections, ramdisk_logs, transitions
from inspector.intake import discovery, handover, lookup
from inspector.runtime import ApiRuntime

LOG = logging.getLogger(__name__)

STARTING_GRACE = 5.0
"""Seconds a ramdisk post waits for a node still in ``starting`` to reach
``waiting`` (a very fast ramdisk can call back before the power-on returns)."""


def continue_(rt: ApiRuntime, data: dict[str, Any]) -> str:
    """Accept a ramdisk's data: look the node up, store, hand over to a
    conductor. ``data`` loses its ``logs`` field."""
    logs = ramdisk_logs.take(data)
    if logs is not None and not isinstance(logs, str):
        ramdisk_logs.decode(logs, None)  # says why they are dropped
        logs = None
    attributes = lookup.from_data(data)
    try:
        record = introspections.lookup(rt.db, attributes)
    except exceptions.NoMatch:
        if rt.conf.processing.node_not_found_hook != "enroll":
            _keep_logs_of_unknown(rt, data, logs)
            raise
        record = discovery.enroll(rt, data, logs, handover.claim_within(rt))
        handover.hand_over(rt, record, ConductorClient.process)
        return record.uuid
    deadline = time.monotonic() + STARTING_GRACE
    while record.state == states.STARTING and time.monotonic() < deadline:
        time.sleep(0.05)
        record = introspections.get(rt.db, record.uuid)
    if not states.allows(record.state, states.PROCESS):
        raise exceptions.InvalidTransition(state=record.state, event=states.PROCESS)
    record = transitions.posted(
        rt.db, record, data, logs=logs, claim_within=handover.claim_within(rt)
    )
    LOG.info("Received ramdisk data for node %s, processing", record.uuid)
    handover.hand_over(rt, record, ConductorClient.process)
    return record.uuid


def _keep_logs_of_unknown(rt: ApiRuntime, data: dict[str, Any], logs: Any) -> None:
    """Data that matches no node is answered 404 and never reaches a
    conductor: its logs are written here, named ``unknown``, as
    ironic-inspector does (a failed lookup is a failure), when this
    process has a ``[processing]ramdisk_logs_dir``."""
    if rt.conf.processing.ramdisk_logs_dir and logs is not None:
        ramdisk_logs.write(rt.conf, data, None, logs)
