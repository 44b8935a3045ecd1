"""Filing the results: how an introspection ends, decided in one place.

Processing (:mod:`inspector.conductor.processing`) comes to an
:class:`Outcome`: complete, or the writes Ironic did not take (it was
away, or kept the node locked) are owed (:mod:`inspector.conductor.owed`)
and made later by the reconcile. Where the data goes afterwards
(``[processing]store_data``, see :mod:`inspector.db.data_store`) is decided
here too, for every way an introspection ends: finished (:func:`finish`),
failed (:func:`fail`), or settled by the reconcile (:func:`file_settled`).
"""

import dataclasses
import logging
from typing import Any

from inspector import exceptions
from inspector.conductor import owed
from inspector.db import (
    hardware_runs,
    introspections,
    stored_data,
    transitions,
)
from inspector.db.introspections import IntrospectionRecord
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)


@dataclasses.dataclass
class Outcome:
    """What processing one node came to."""

    processed: dict[str, Any] | None
    """The data after the hooks; None when Ironic was away before any of
    it could be computed (the whole processing is owed)."""
    pending: owed.WritesOwed | None = None
    """The writes Ironic did not take, or None when it took them all."""
    hardware: hardware_runs.Run | None = None
    """The run to record in the hardware history (its record None when
    processing did not get that far)."""


def named(uuid: str, name: str | None) -> str:
    """A node as the processing's log lines name it: ``UUID (name)`` when
    its name is known, so that grep finds it by either."""
    return f"{uuid} ({name})" if name else uuid


def finish(
    rt: Runtime, record: IntrospectionRecord, done: Outcome
) -> IntrospectionRecord:
    """Record ``done``: the data filed, the introspection finished (with
    the writes it owes, if any)."""
    uuid = record.uuid
    node = named(uuid, done.hardware.node_name if done.hardware else None)
    store = rt.stores.current()
    writes = None
    if done.pending is not None:
        # a node whose results Ironic did not take keeps them in the database
        # whatever the store: they are what the reconcile makes later
        if done.processed is not None:
            stored_data.store(rt.db, uuid, done.processed, processed=True)
        writes = (done.pending.writes, done.pending.reason)
        LOG.warning(
            "Introspection of node %s finished, but Ironic did not take "
            "its results (%s): pending %s; the reconcile will make them",
            node,
            done.pending.reason,
            owed.describe(done.pending.writes),
        )
    else:
        # filed before the state says finished: a client that sees
        # ``finished`` can read the data at once
        store.keep(uuid, done.processed)
    finished = transitions.finished(rt.db, record, done.hardware, writes)
    if done.pending is None:
        store.settle(finished)
    LOG.info("Introspection of node %s finished", node)
    return finished


def keep_before_failure(rt: Runtime, uuid: str) -> None:
    """An introspection is about to end in error: its raw data is filed
    where the store says first, so a client that sees ``error`` can read
    it at once (as for ``finished``)."""
    rt.stores.current().keep(uuid, None)


def file_failure(rt: Runtime, failed: IntrospectionRecord) -> None:
    """An introspection ended in error: the store settles it (the database
    keeps its raw data; elsewhere the database's copy is dropped)."""
    rt.stores.current().settle(failed)


def file_settled(rt: Runtime, record: IntrospectionRecord) -> None:
    """The reconcile made a finished introspection's owed writes: the data
    kept in the database for it goes where the store says."""
    try:
        processed = stored_data.get(rt.db, record.uuid, processed=True)
    except exceptions.NotFound:
        processed = None
    store = rt.stores.current()
    store.keep(record.uuid, processed)
    store.settle(record)


def fail(rt: Runtime, uuid: str, version: int, message: str) -> None:
    """End the introspection in ``error`` with ``message`` (if still
    current), its data filed first."""
    try:
        keep_before_failure(rt, uuid)
    except OSError as exc:  # the error is recorded all the same
        LOG.error("Could not file the data of node %s: %s", uuid, exc)
    try:
        record = introspections.get(rt.db, uuid)
        if record.version != version:
            raise exceptions.StaleState(node=uuid, version=version)
        # in the history too, without a record
        failed = transitions.failed(rt.db, record, message, hardware_runs.new_run(uuid))
    except (
        exceptions.StaleState,
        exceptions.NotFound,
        exceptions.InvalidTransition,
    ) as exc:
        LOG.warning(
            "Could not record the failure of node %s (%s): %s", uuid, message, exc
        )
        return
    file_failure(rt, failed)
