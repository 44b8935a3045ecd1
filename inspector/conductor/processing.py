"""The processing step (and the reapply, the same step on data already
kept): the ramdisk's post through the hooks and the rules into Ironic, the
node powered off, the results filed (:mod:`inspector.conductor.filing`).

The post is read once, with the step's fence (its ``logs`` came apart from
its data at the API, :mod:`inspector.db.stored_data`). The hooks change
that one copy in place: nothing reads the post afterwards. The logs are
let go at once in the database (a redelivered or taken-over step finds
them gone) and written to ``[processing]ramdisk_logs_dir`` when due
(:mod:`inspector.db.ramdisk_logs`).
"""

import logging
import time
from typing import Any

from inspector import exceptions, faults, metrics, states
from inspector.conductor import filing, owed, rule_cache
from inspector.conductor.fencing import fence, fenced_post
from inspector.db import hardware_runs, ramdisk_logs, stored_data
from inspector.db.introspections import IntrospectionRecord
from inspector.history import diff
from inspector.history import record as hardware_record
from inspector.hooks import apply, pipeline
from inspector.hooks.base import NodeContext, ProcessingHook
from inspector.redfish import provenance
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)


def run(rt: Runtime, hooks: list[ProcessingHook], record: IntrospectionRecord) -> None:
    """Process the post stored for ``record`` and finish it. A reapply
    (``reapplying``) never powers the node off: it was not booted."""
    post = fenced_post(rt, record)
    logs = _hold_logs(rt, record, post)
    if record.bmc_data is not None and record.state == states.PROCESSING:
        _merge_bmc_data(record, post.data)
    power_off = (
        record.state == states.PROCESSING
        and record.manage_boot
        and rt.conf.processing.power_off
        # an out-of-band run never booted the machine: it stays as it was
        and record.mode != states.OUT_OF_BAND
    )
    LOG.debug(
        "Processing the data of node %s with hooks %s (power off after: %s)",
        record.uuid,
        ", ".join(h.name for h in hooks),
        power_off,
    )
    try:
        done = _conclude(rt, hooks, record, post.data, power_off)
        faults.at("applied", record.state, uuid=record.uuid)
        # before the state says finished: a client that sees it finds the file
        logs.settle(failed=False)
        filing.finish(rt, record, done)
    except exceptions.StaleState:
        logs.settle(failed=False)  # no longer ours to judge; the error field is
        raise
    except BaseException:
        logs.settle(failed=True)
        raise


def _merge_bmc_data(record: IntrospectionRecord, data: dict[str, Any]) -> None:
    """An ``auto`` run that fell back to the ramdisk: the BMC's facts kept
    on the record fill what the ramdisk's post lacks; where both tell, the
    ramdisk's win and the disagreement is logged and kept in the data."""
    for item in provenance.merge_data(record.bmc or {}, data):
        LOG.warning(
            "Node %s: the BMC and the ramdisk disagree on %s (BMC %s, "
            "ramdisk %s); the ramdisk's is kept",
            record.uuid,
            item["fact"],
            item[provenance.REDFISH],
            item[provenance.RAMDISK],
        )


def _hold_logs(
    rt: Runtime, record: IntrospectionRecord, post: stored_data.Post
) -> ramdisk_logs.Held:
    """The post's logs, let go in the database at once."""
    logs = post.logs
    if ramdisk_logs.FIELD in post.data:
        # stored inline by an API of an earlier release (a rolling upgrade)
        logs = ramdisk_logs.take(post.data)
        stored_data.store(rt.db, record.uuid, post.data, processed=False)
    elif logs is not None:
        stored_data.drop_logs(rt.db, record.uuid)
    if record.state != states.PROCESSING:
        # a reapply is no boot of the ramdisk: ironic-inspector writes no logs
        logs = None
    return ramdisk_logs.Held(rt.conf, post.data, record.uuid, logs)


def update_node(
    rt: Runtime,
    hooks: list[ProcessingHook],
    uuid: str,
    data: dict[str, Any],
    ports: list[dict[str, Any]] | None = None,
    hardware: hardware_runs.Run | None = None,
    previous_run: str | None = None,
) -> dict[str, Any]:
    """Run every hook and rule on ``data`` (in place), write the result to
    Ironic.

    With ``hardware`` (the run being recorded), the hardware record is
    made after the hooks and before the rules, compared with the record
    of ``previous_run`` (the node's latest, one read), and the changes
    given to the rules as ``data["hardware_changes"]``.

    ``ports`` are the node's ports when they were just read (at the start
    of this introspection); else they are listed from Ironic. The node is
    always read afresh.

    Returns the processed data. Raises inspector exceptions with a message
    an operator can act on; nothing is written to Ironic before every hook
    and every introspection rule has run, so a failing hook or a rule's
    ``fail`` action leaves the node untouched. Raises
    :class:`owed.WritesOwed` when Ironic did not take the writes.
    """
    pipeline.run_before_processing(hooks, data, uuid)
    node = rt.baremetal.get_node(uuid)
    if ports is None:
        ports = rt.baremetal.list_ports(uuid)
    by_mac = {str(p["address"]).lower(): p for p in ports if p.get("address")}
    ctx = NodeContext(uuid=uuid, node=node, ports=by_mac)
    pipeline.run_before_update(hooks, data, ctx)
    if hardware is not None:
        _observe(rt, hardware, data, node, previous_run)
    applied = rule_cache.apply_rules(rt, data, ctx)
    try:
        apply.apply_to_ironic(rt.baremetal, ctx)
    except owed.TEMPORARY as exc:
        raise owed.WritesOwed(owed.from_context(ctx), exc.message, data) from exc
    LOG.info(
        "Node %s updated in Ironic: %d property changes, %d ports created, "
        "%d deleted, %d traits added, %d removed, %d rules applied",
        filing.named(uuid, node.get("name")),
        len(ctx.node_patches),
        len(ctx.ports_to_create),
        len(ctx.ports_to_delete),
        len(ctx.traits_to_add),
        len(ctx.traits_to_remove),
        len(applied),
    )
    return data


def _observe(
    rt: Runtime,
    hardware: hardware_runs.Run,
    data: dict[str, Any],
    node: dict[str, Any],
    previous_run: str | None,
) -> None:
    """Fill ``hardware`` from the processed ``data``: its record, facts,
    links and changes against ``previous_run``'s record."""
    summary = hardware_record.summarise(data)
    previous = (
        None if previous_run is None else hardware_runs.get_record(rt.db, previous_run)
    )
    changes = diff.changes(previous, summary.record)
    hardware.node_name = node.get("name")
    hardware.record = summary.record
    hardware.facts = summary.facts
    hardware.links = summary.links
    hardware.changes = changes
    hardware.change_count = diff.changed_components(changes)
    # rules see this run's changes (data://hardware_changes)
    data["hardware_changes"] = [{**change, "run": hardware.run} for change in changes]
    for change in changes:
        metrics.HARDWARE_CHANGES.labels(change["kind"]).inc()
    if changes:
        LOG.info(
            "Node %s: %d hardware changes in %d components since run %s",
            filing.named(hardware.node_uuid, hardware.node_name),
            len(changes),
            hardware.change_count,
            previous_run,
        )


def _ports_read_at_start(record: IntrospectionRecord) -> list[dict[str, Any]] | None:
    """The ports the start read, for the processing of the data the
    ramdisk this start booted posted; None otherwise (a reapply, a
    discovery, a record from before they were kept): list them then."""
    if record.state != states.PROCESSING or record.node_ports is None:
        return None
    if record.mode == states.OUT_OF_BAND:
        return None  # its start created ports after reading them
    ports = record.node_ports
    return ports


def _conclude(
    rt: Runtime,
    hooks: list[ProcessingHook],
    record: IntrospectionRecord,
    data: dict[str, Any],
    power_off: bool,
) -> filing.Outcome:
    """Process ``data`` for ``record`` and power the node off if asked.

    Failures an operator must see (a hook, a rule, Ironic refusing a write)
    raise; Ironic being away does not: the outcome says what is owed.
    """
    uuid = record.uuid
    started = time.monotonic()
    result = "error"
    hardware = hardware_runs.new_run(uuid)
    try:
        ports = _ports_read_at_start(record)
        processed = update_node(
            rt, hooks, uuid, data, ports, hardware, record.hardware_run
        )
        done = filing.Outcome(processed, hardware=hardware)
        result = "success"
    except owed.WritesOwed as exc:  # Ironic is away: keep the results
        done, result = filing.Outcome(exc.data, exc, hardware), "pending"
    except owed.TEMPORARY as exc:  # away before anything was written
        pending = owed.WritesOwed({"reprocess": True}, exc.message, data)
        done, result = filing.Outcome(None, pending, hardware), "pending"
    finally:
        metrics.PROCESSING_SECONDS.labels(result).observe(time.monotonic() - started)
    if power_off and done.pending is None:
        fence(rt, record)
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
