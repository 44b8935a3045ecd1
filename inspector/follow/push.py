"""Following Ironic's inspections by the push of the inspection hook that
runs inside Ironic (``ironic-push-hook/``): the push checked against
Ironic, recorded once as Ironic's inspection, its data kept for a
reapply and its ramdisk logs written as the ramdisk's own.

The hook pushes during the inspection, holding the node's lock, so
Ironic's node shows the inspection running with the start the push
names (``inspection_started_at``). A push resent from the hook's spool
may arrive after the inspection ended, and Ironic clears the start when
an inspection ends well: then Ironic's last finish must come after the
pushed start. Anything else is refused and logged: a node Ironic does not
have, an inspection Ironic failed or has replaced, a made-up start.

A push is recorded with its start and no finish
(:func:`inspector.db.followed.record`); a poll that later sees the
inspection ended gives the row its finish
(:func:`inspector.db.followed.ended_push`) and records nothing more. A
duplicate (a resend of a push that was taken), or a push of an
inspection a poll recorded first, records nothing either.
"""

import dataclasses
import datetime
import logging
from typing import Any

from inspector import exceptions, metrics, states
from inspector.db import (
    followed,
    hardware_runs,
    introspections,
    ramdisk_logs,
    stored_data,
)
from inspector.follow import observe, poller
from inspector.history import record as hardware_record
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)

SOURCE = "ironic"


class InspectionMismatch(exceptions.Conflict):
    """The push is not of the inspection Ironic shows for the node."""


@dataclasses.dataclass(frozen=True)
class Push:
    """One push as the API took it."""

    node_uuid: str
    started_at: str
    """The inspection's start as the hook read it from Ironic's node."""
    data: dict[str, Any]
    """The ramdisk's data as Ironic received it (the inventory under
    ``inventory``, the plugin data's keys beside it, no logs), checked and
    redacted as a ramdisk's post: what a reapply processes."""
    logs: str | None
    caller: str
    """Who pushed, for the log: the address and the user."""


@dataclasses.dataclass(frozen=True)
class Taken:
    """What became of a push."""

    recorded: bool
    run: str | None
    message: str


def _started(push: Push) -> datetime.datetime:
    started = poller.parse_time(push.started_at)
    if started is None:
        raise exceptions.InvalidInput(
            f"inspection_started_at: {push.started_at[:64]!r} is not an ISO 8601 time"
        )
    return started


def _ironic_node(rt: Runtime, push: Push, started: datetime.datetime) -> Any:
    """Ironic's node, if it shows the pushed inspection: running with
    that start, or ended well since (no start, a finish after it).

    :raises NodeNotFound: Ironic has no such node.
    :raises InspectionMismatch: Ironic shows another inspection, or none.
    :raises ServiceUnavailable: Ironic cannot be asked (the push may be
        sent again).
    """
    uuid = push.node_uuid
    try:
        node = rt.baremetal.inspected_node(uuid)
    except exceptions.NotFound:
        LOG.warning(
            "Refused a push of Ironic's inspection of node %s from %s: "
            "Ironic has no such node",
            uuid,
            push.caller,
        )
        raise exceptions.NodeNotFound(node=uuid) from None
    except exceptions.BaremetalForbidden as exc:
        raise exceptions.ServiceUnavailable(
            reason=f"{exc}: checking a push needs this service's Ironic user "
            "to read nodes (Ironic's policy baremetal:node:get)"
        ) from exc
    current = poller.parse_time(node.get("inspection_started_at"))
    finished = poller.parse_time(node.get("inspection_finished_at"))
    if current == started:
        return node  # running: the hook's own push
    if current is None and finished is not None and finished >= started:
        return node  # ended well since: a push the hook resent
    if current is not None:
        shown = f"Ironic is running an inspection started at {current.isoformat()}"
    elif finished is not None:
        shown = (
            "Ironic's last inspection of the node finished at "
            f"{finished.isoformat()}, before that"
        )
    else:
        shown = "Ironic shows no inspection of the node (it failed, or none ran)"
    LOG.warning(
        "Refused a push of Ironic's inspection of node %s from %s, started at %s: %s",
        uuid,
        push.caller,
        started.isoformat(),
        shown,
    )
    raise InspectionMismatch(
        f"Node {uuid}: the pushed inspection started at {started.isoformat()}, "
        f"but {shown}: only the inspection Ironic runs, or ended last, is taken"
    )


def _ours_running(rt: Runtime, inspection: followed.Inspection) -> bool:
    """Whether an introspection of ours started before this inspection and
    still runs: Ironic's inspection is then ours (out of band,
    ``[redfish]engine = ironic``), recorded when ours reads it."""
    try:
        row = introspections.get(rt.db, inspection.node_uuid)
    except exceptions.IntrospectionNotFound:
        return False
    if row.state in states.FINAL or inspection.started_at is None:
        return False
    return row.started_at is not None and row.started_at <= inspection.started_at


def _recorded(
    inspection: followed.Inspection, known: followed.Inspection | None
) -> str | None:
    """Why the node's row ``known`` makes the pushed ``inspection``
    nothing to record; None when it is new."""
    if known is None:
        return None
    assert inspection.started_at is not None
    if inspection.same_as(known):
        return "already recorded"
    if known.started_at is not None and known.started_at > inspection.started_at:
        return "a later inspection of the node is recorded: not recorded"
    if known.started_at is None and known.finished_at is not None:
        # a poll's (Ironic shows no start once an inspection ended): this
        # inspection, or a later one, if it ended after the pushed start
        if known.finished_at >= inspection.started_at:
            return "already recorded"
    return None


def accept(rt: Runtime, push: Push) -> Taken:
    """Check ``push`` against Ironic and record it, unless recorded.

    :raises InvalidInput: the push is not of an IPA inventory.
    :raises NodeNotFound, InspectionMismatch: refused (and logged).
    :raises ServiceUnavailable: Ironic or the database is away.
    """
    uuid = push.node_uuid
    started = _started(push)
    node = _ironic_node(rt, push, started)
    inspection = followed.Inspection(uuid, started, None)
    if _ours_running(rt, inspection):
        return Taken(
            False, None, "part of an introspection of this service: not recorded"
        )
    data = observe.as_processed(
        push.data.get("inventory"),
        {k: v for k, v in push.data.items() if k != "inventory"},
    )
    why = _recorded(inspection, followed.seen(rt.db, [uuid]).get(uuid))
    run = None
    if why is None:
        run = observe.run_of(
            rt.db,
            {"uuid": uuid, "name": node.get("name")},
            data,
            SOURCE,
            node.get("inspect_interface"),
        )
        if not followed.record(rt.db, inspection, run):
            why = "already recorded"
    if why is not None:
        # a resend, or a poll got there first: the node's latest run may
        # still lack the data a reapply needs
        if _latest_record_is(rt, uuid, data):
            _keep(rt, uuid, push.data, data)
        LOG.info(
            "Node %s: Ironic's inspection started at %s, pushed from %s: %s",
            uuid,
            started.isoformat(),
            push.caller,
            why,
        )
        return Taken(False, None, why)
    assert run is not None
    _keep(rt, uuid, push.data, data)
    _write_logs(rt, push)
    metrics.FOLLOW_RUNS.labels("push").inc()
    LOG.info(
        "Node %s (%s): Ironic's inspection (%s) started at %s, pushed from "
        "%s, recorded as run %s",
        uuid,
        node.get("name") or "no name",
        node.get("inspect_interface") or "unknown interface",
        started.isoformat(),
        push.caller,
        run.run,
    )
    return Taken(True, run.run, "recorded")


def _latest_record_is(rt: Runtime, uuid: str, data: dict[str, Any]) -> bool:
    """Whether the node's latest run is Ironic's and holds the record this
    data makes (so the data is that run's, for a reapply)."""
    try:
        latest = introspections.get(rt.db, uuid).hardware_run
    except exceptions.IntrospectionNotFound:
        return False
    newest = hardware_runs.history(rt.db, uuid, limit=1)
    if not newest or newest[0].uuid != latest or newest[0].source != SOURCE:
        return False
    recorded = hardware_runs.get_record(rt.db, latest)
    return bool(recorded == hardware_record.summarise(data).record)


def _keep(
    rt: Runtime, uuid: str, raw: dict[str, Any], processed: dict[str, Any]
) -> None:
    """The pushed data filed as an introspection's is
    (``[processing]store_data``): the raw data is what a reapply
    processes; the processed data is Ironic's, as the record read it."""
    if rt.conf.processing.store_data == "none":
        return
    try:
        stored_data.store(rt.db, uuid, raw, processed=False)
        store = rt.stores.current()
        store.keep(uuid, processed)
        store.settle(introspections.get(rt.db, uuid))
    except OSError as exc:  # a store directory that cannot be written
        LOG.error(
            "Node %s: the data of Ironic's pushed inspection could not be "
            "filed, so it cannot be reapplied: %s",
            uuid,
            exc,
        )


def _write_logs(rt: Runtime, push: Push) -> None:
    """The ramdisk's logs written as those of an introspection of ours
    that succeeded: with ``[processing]always_store_ramdisk_logs``."""
    if push.logs and ramdisk_logs.must_write(rt.conf, push.data, failed=False):
        ramdisk_logs.write(rt.conf, push.data, push.node_uuid, push.logs)
