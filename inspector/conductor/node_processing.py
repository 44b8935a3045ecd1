"""Turns a node's ramdisk data into Ironic updates: hooks, then writes."""

import copy
import logging
from typing import Any

from inspector.db import rules as rules_db
from inspector.processing import apply, owed, pipeline
from inspector.processing.base import NodeContext, ProcessingHook
from inspector.rules import runner
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)


def process_data(
    rt: Runtime, hooks: list[ProcessingHook], uuid: str, raw: dict[str, Any]
) -> dict[str, Any]:
    """Run every hook on a copy of ``raw``, write the result to Ironic.

    Returns the processed data. Raises inspector exceptions with a message
    an operator can act on; nothing is written to Ironic before every hook
    and every introspection rule has run, so a failing hook or a rule's
    ``fail`` action leaves the node untouched.
    """
    data = copy.deepcopy(raw)
    pipeline.run_before_processing(hooks, data)
    node = rt.baremetal.get_node(uuid)
    ports = {
        str(p["address"]).lower(): p
        for p in rt.baremetal.list_ports(uuid)
        if p.get("address")
    }
    ctx = NodeContext(uuid=uuid, node=node, ports=ports)
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
