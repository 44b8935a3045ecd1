"""Writing a judged import (:mod:`.plan`) in one transaction: every node's
status and lookup attributes, its stored data, a first run of its
hardware history from its latest processed data (``source`` upstream),
and the rules with their UUIDs, creation times and disabled flags. A
failure writes nothing."""

import logging
from typing import Any, cast

import sqlalchemy as sa

from inspector import exceptions, states
from inspector.db import hardware_runs, introspections, models, rules, stored_data
from inspector.db.engine import Database
from inspector.history import record as hardware_record
from inspector.importing.plan import Plan
from inspector.importing.source import UpstreamNode

LOG = logging.getLogger(__name__)

_ATTRIBUTES = cast(sa.Table, models.Attribute.__table__)


def _status(node: UpstreamNode) -> dict[str, Any]:
    now = models.utcnow()
    return {
        "uuid": node.uuid,
        "state": node.state,
        "version": 1,
        "started_at": node.started_at or node.finished_at or now,
        "finished_at": node.finished_at,
        "error": node.error,
        "manage_boot": node.manage_boot,
        **introspections.ownership(node.state, now, 0),
    }


def _seed(conn: sa.Connection, node: UpstreamNode) -> str | None:
    """The node's first run, from 12.x's latest processed data; its UUID
    (None when the data gives no record)."""
    assert node.processed is not None
    try:
        summary = hardware_record.summarise(node.processed)
    except (TypeError, ValueError, AttributeError) as exc:
        LOG.warning(
            "Node %s: its 12.x data gives no hardware record: %s", node.uuid, exc
        )
        return None
    run = hardware_runs.new_run(node.uuid)
    run.record = summary.record
    run.facts = summary.facts
    run.links = summary.links
    run.source = "upstream"
    finished = node.finished_at or node.started_at or models.utcnow()
    run.started_at = node.started_at or finished
    hardware_runs.insert(conn, run, finished, states.FINISHED)
    return run.run


def apply(db: Database, plan: Plan) -> dict[str, int]:
    """Write ``plan``; what was written, by kind.

    :raises InvalidInput: the plan has blockers (nothing written).
    :raises DatabaseUnavailable: the database failed (nothing written).
    """
    if plan.blockers:
        raise exceptions.InvalidInput("Nothing imported: " + "; ".join(plan.blockers))
    written = {"nodes": 0, "attributes": 0, "data": 0, "runs": 0, "rules": 0}
    with db.begin() as conn:
        for node in plan.nodes:
            values = _status(node)
            if node.state in states.FINAL and node.processed is not None:
                run = _seed(conn, node)
                if run is not None:
                    values["hardware_run"] = run
                    written["runs"] += 1
            introspections.insert(conn, values)
            written["nodes"] += 1
            rows = [
                {"node_uuid": node.uuid, "name": name, "value": value}
                for name, value in sorted(set(node.attributes))
            ]
            if rows:
                conn.execute(sa.insert(_ATTRIBUTES), rows)
                written["attributes"] += len(rows)
            for processed, data in ((True, node.processed), (False, node.unprocessed)):
                if data is not None:
                    stored_data.put(conn, node.uuid, data, processed=processed)
                    written["data"] += 1
        for upstream_rule, valid in plan.rules:
            rules.insert(
                conn,
                valid,
                created_at=upstream_rule.get("created_at"),
                disabled=bool(upstream_rule.get("disabled")),
            )
            written["rules"] += 1
    return written
