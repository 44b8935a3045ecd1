"""What processing a node's ramdisk data comes to, decided in one place.

Processing runs the hooks and the rules, then writes the results to Ironic
and powers the node off. Its :class:`Outcome` is either complete, or the
writes Ironic did not take (it was away, or kept the node locked) are owed
(:mod:`inspector.conductor.owed`) and made later by the reconcile. Where
the data goes afterwards (``[processing]store_data``, see
:mod:`inspector.db.data_store`) is decided here too, for every way an
introspection ends: finished, failed, or settled by the reconcile.
"""

import copy
import dataclasses
import json
import logging
import time
from typing import Any

from inspector import exceptions, metrics, states
from inspector.conductor import owed
from inspector.db import data_store, introspections, stored_data
from inspector.db import rules as rules_db
from inspector.db.introspections import IntrospectionRecord
from inspector.processing import apply, pipeline
from inspector.processing.base import NodeContext, ProcessingHook
from inspector.rules import runner
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)


def process_data(
    rt: Runtime,
    hooks: list[ProcessingHook],
    uuid: str,
    raw: dict[str, Any],
    ports: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Run every hook on a copy of ``raw``, write the result to Ironic.

    ``ports`` are the node's ports when they were just read (at the start
    of this introspection); else they are listed from Ironic. The node is
    always read afresh.

    Returns the processed data. Raises inspector exceptions with a message
    an operator can act on; nothing is written to Ironic before every hook
    and every introspection rule has run, so a failing hook or a rule's
    ``fail`` action leaves the node untouched. Raises
    :class:`owed.WritesOwed` when Ironic did not take the writes.
    """
    data = copy.deepcopy(raw)
    pipeline.run_before_processing(hooks, data, uuid)
    node = rt.baremetal.get_node(uuid)
    if ports is None:
        ports = rt.baremetal.list_ports(uuid)
    by_mac = {str(p["address"]).lower(): p for p in ports if p.get("address")}
    ctx = NodeContext(uuid=uuid, node=node, ports=by_mac)
    pipeline.run_before_update(hooks, data, ctx)
    applied = runner.apply_rules(rules_db.list_all(rt.db), data, ctx)
    try:
        apply.apply_to_ironic(rt.baremetal, ctx)
    except owed.TEMPORARY as exc:
        raise owed.WritesOwed(owed.from_context(ctx), exc.message, data) from exc
    LOG.info(
        "Node %s updated in Ironic: %d property changes, %d ports created, "
        "%d deleted, %d traits added, %d removed, %d rules applied",
        uuid,
        len(ctx.node_patches),
        len(ctx.ports_to_create),
        len(ctx.ports_to_delete),
        len(ctx.traits_to_add),
        len(ctx.traits_to_remove),
        len(applied),
    )
    return data


def _ports_read_at_start(record: IntrospectionRecord) -> list[dict[str, Any]] | None:
    """The ports the start read, for the processing of the data the
    ramdisk this start booted posted; None otherwise (a reapply, a
    discovery, a record from before they were kept): list them then."""
    if record.state != states.PROCESSING or record.ports is None:
        return None
    ports: list[dict[str, Any]] = json.loads(record.ports)
    return ports


@dataclasses.dataclass
class Outcome:
    """What processing one node came to."""

    processed: dict[str, Any] | None
    """The data after the hooks; None when Ironic was away before any of
    it could be computed (the whole processing is owed)."""
    pending: owed.WritesOwed | None = None
    """The writes Ironic did not take, or None when it took them all."""


def process(
    rt: Runtime,
    hooks: list[ProcessingHook],
    record: IntrospectionRecord,
    raw: dict[str, Any],
    power_off: bool,
) -> Outcome:
    """Process ``raw`` for ``record`` and power the node off if asked.

    Failures an operator must see (a hook, a rule, Ironic refusing a write)
    raise; Ironic being away does not: the outcome says what is owed.
    """
    uuid = record.uuid
    started = time.monotonic()
    result = "error"
    try:
        done = Outcome(process_data(rt, hooks, uuid, raw, _ports_read_at_start(record)))
        result = "success"
    except owed.WritesOwed as exc:  # Ironic is away: keep the results
        done, result = Outcome(exc.data, exc), "pending"
    except owed.TEMPORARY as exc:  # away before anything was written
        done = Outcome(None, owed.WritesOwed({"reprocess": True}, exc.message, raw))
        result = "pending"
    finally:
        metrics.PROCESSING_SECONDS.labels(result).observe(time.monotonic() - started)
    if power_off and done.pending is None:
        introspections.check_current(rt.db, uuid, record.version)
        try:
            rt.baremetal.set_power_state(uuid, "power off")
        except owed.TEMPORARY as exc:
            done.pending = owed.WritesOwed({}, exc.message, done.processed or {})
        except exceptions.InspectorError as exc:
            raise exceptions.InspectorError(
                f"Failed to power off the node after processing: {exc}"
            ) from exc
    if done.pending is not None:
        done.pending.writes["power_off"] = power_off
    return done


def finish(
    rt: Runtime, record: IntrospectionRecord, done: Outcome
) -> IntrospectionRecord:
    """Record ``done``: the data filed, the introspection finished (with
    the writes it owes, if any)."""
    uuid = record.uuid
    store = data_store.for_conf(rt.conf, rt.db)
    writes = None
    if done.pending is not None:
        # a node whose results Ironic did not take keeps them in the database
        # whatever the store: they are what the reconcile makes later
        if done.processed is not None:
            stored_data.store(rt.db, uuid, done.processed, processed=True)
        writes = (owed.dumps(done.pending.writes), done.pending.reason)
        LOG.warning(
            "Introspection of node %s finished, but Ironic did not take "
            "its results (%s): pending %s; the reconcile will make them",
            uuid,
            done.pending.reason,
            owed.describe(done.pending.writes),
        )
    else:
        # filed before the state says finished: a client that sees
        # ``finished`` can read the data at once
        store.keep(uuid, done.processed)
    finished = introspections.transition(
        rt.db,
        uuid,
        states.FINISH,
        expected_version=record.version,
        owed=writes,
        current=record,
    )
    if done.pending is None:
        store.settle(finished)
    LOG.info("Introspection of node %s finished", uuid)
    return finished


def keep_before_failure(rt: Runtime, uuid: str) -> None:
    """An introspection is about to end in error: its raw data is filed
    where the store says first, so a client that sees ``error`` can read
    it at once (as for ``finished``)."""
    data_store.for_conf(rt.conf, rt.db).keep(uuid, None)


def file_failure(rt: Runtime, failed: IntrospectionRecord) -> None:
    """An introspection ended in error: the store settles it (the database
    keeps its raw data; elsewhere the database's copy is dropped)."""
    data_store.for_conf(rt.conf, rt.db).settle(failed)


def file_settled(rt: Runtime, record: IntrospectionRecord) -> None:
    """The reconcile made a finished introspection's owed writes: the data
    kept in the database for it goes where the store says."""
    try:
        processed = stored_data.get(rt.db, record.uuid, processed=True)
    except exceptions.NotFound:
        processed = None
    store = data_store.for_conf(rt.conf, rt.db)
    store.keep(record.uuid, processed)
    store.settle(record)
