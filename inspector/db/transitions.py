"""The writes of an introspection record, one named writer per event.

Each writer takes the record as its caller read it and moves it through
one event of the state machine (:mod:`inspector.states`) with a
compare-and-swap on that version (:func:`_swap`): :class:`StaleState` when
anyone wrote since, or the row is gone. In the same transaction it writes
what the event carries: the raw data of a post, the hardware run that
ends, the Ironic writes still owed. Every change of state bumps the
version and resets the ownership (a step a conductor must take gets a
deadline to be claimed by).
"""

import json
from typing import Any

import sqlalchemy as sa

from inspector import states
from inspector.db import hardware_runs, stored_data
from inspector.db.engine import Database
from inspector.db.introspections import (
    CLAIM_WITHIN,
    DROP_ATTRIBUTES,
    IntrospectionRecord,
    compare_and_swap,
    ownership,
    record_of,
)
from inspector.db.models import utcnow


def _swap(
    conn: sa.Connection,
    record: IntrospectionRecord,
    event: str,
    values: dict[str, object] | None = None,
    claim_within: float = CLAIM_WITHIN,
) -> Any:
    """``record`` through ``event``, with ``values``; the row as written.

    :raises InvalidTransition: the event is not allowed in its state.
    :raises StaleState: the row is no longer at ``record.version``.
    """
    new_state = states.next_state(record.state, event)
    changes: dict[str, object] = {
        "state": new_state,
        **ownership(new_state, utcnow(), claim_within),
        **(values or {}),
    }
    return compare_and_swap(conn, record.uuid, record.version, changes)


def waiting(
    db: Database, record: IntrospectionRecord, bmc_data: dict[str, Any] | None = None
) -> IntrospectionRecord:
    """The ramdisk boots (or the operator boots it): its post is awaited.

    ``bmc_data`` is what a BMC told a run of mode ``auto`` that boots the
    ramdisk for the rest: kept for the processing, the run in-band now.
    """
    values: dict[str, object] = {}
    if bmc_data is not None:
        values = {"mode": None, "bmc_data": json.dumps(bmc_data)}
    with db.begin() as conn:
        return record_of(_swap(conn, record, states.WAIT, values))


def posted(
    db: Database,
    record: IntrospectionRecord,
    data: dict[str, Any],
    *,
    logs: str | None = None,
    claim_within: float = CLAIM_WITHIN,
    out_of_band: bool = False,
) -> IntrospectionRecord:
    """Data to process arrived (a ramdisk's post, a discovery, a BMC's
    answer with ``out_of_band``), stored raw with the step it starts;
    ``logs`` (the post's, taken out of it) beside it."""
    values: dict[str, object] = {"mode": states.OUT_OF_BAND} if out_of_band else {}
    with db.begin() as conn:
        written = _swap(conn, record, states.PROCESS, values, claim_within)
        stored_data.put(conn, record.uuid, data, processed=False, logs=logs)
    return record_of(written)


def reapply_requested(
    db: Database,
    record: IntrospectionRecord,
    data: dict[str, Any] | None = None,
    *,
    claim_within: float = CLAIM_WITHIN,
) -> IntrospectionRecord:
    """The stored data (or ``data``, stored raw first) is to be processed
    again."""
    with db.begin() as conn:
        written = _swap(conn, record, states.REAPPLY, None, claim_within)
        if data is not None:
            stored_data.put(conn, record.uuid, data, processed=False)
    return record_of(written)


def abort_requested(
    db: Database, record: IntrospectionRecord, *, claim_within: float = CLAIM_WITHIN
) -> IntrospectionRecord:
    """The operator asked to abort: a conductor powers the node off."""
    with db.begin() as conn:
        return record_of(_swap(conn, record, states.ABORT, None, claim_within))


def finished(
    db: Database,
    record: IntrospectionRecord,
    run: hardware_runs.Run | None = None,
    owed: tuple[dict[str, Any], str] | None = None,
) -> IntrospectionRecord:
    """Processed: ``run`` into the hardware history (the node's latest
    when it has a record), with the Ironic writes still ``owed`` and why."""
    values: dict[str, object] = {}
    if owed is not None:
        writes, reason = owed
        values = {
            "owed_writes": json.dumps(writes, sort_keys=True),
            "owed_reason": reason,
        }
    return _ended(db, record, states.FINISH, None, run, values)


def failed(
    db: Database,
    record: IntrospectionRecord,
    error: str,
    run: hardware_runs.Run | None = None,
) -> IntrospectionRecord:
    """Ended in ``error``; ``run`` (without a record) in the history."""
    return _ended(db, record, states.FAIL, error, run)


def aborted(
    db: Database, record: IntrospectionRecord, run: hardware_runs.Run | None = None
) -> IntrospectionRecord:
    """Ended by the operator's abort."""
    return _ended(db, record, states.ABORT_END, states.ABORTED_MESSAGE, run)


def timed_out(
    db: Database, record: IntrospectionRecord, run: hardware_runs.Run | None = None
) -> IntrospectionRecord:
    """Ended by ``[DEFAULT]timeout``."""
    return _ended(db, record, states.TIMEOUT, states.TIMEOUT_MESSAGE, run)


def _ended(
    db: Database,
    record: IntrospectionRecord,
    event: str,
    error: str | None,
    run: hardware_runs.Run | None,
    values: dict[str, object] | None = None,
) -> IntrospectionRecord:
    """A final state: ``finished_at``, the error (or none), the lookup
    attributes and the BMC's data dropped, ``run`` recorded."""
    new_state = states.next_state(record.state, event)
    now = utcnow()
    ending: dict[str, object] = {
        "finished_at": now,
        "error": error if new_state == states.ERROR else None,
        "owed_writes": None,
        "owed_reason": None,
        **(values or {}),
    }
    if record.bmc_data is not None:
        ending["bmc_data"] = None
    if run is not None and new_state == states.FINISHED and run.record is not None:
        ending["hardware_run"] = run.run
    with db.begin() as conn:
        conn.execute(DROP_ATTRIBUTES, {"uuid": record.uuid})
        written = _swap(conn, record, event, ending)
        if run is not None:
            hardware_runs.ended(conn, run, record, new_state, now, error)
    return record_of(written)
