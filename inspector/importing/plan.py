"""What an import of a 12.x deployment would do, judged before anything
is written: the nodes and rules new here, those already here (a second
run imports nothing twice), what cannot come across (each named), and
what stops the import (a node 12.x is working on)."""

import dataclasses
from typing import Any

import sqlalchemy as sa
from oslo_config import cfg

from inspector import exceptions, states
from inspector.db import models
from inspector.db.engine import Database
from inspector.importing.source import Upstream, UpstreamNode

WORKING = (
    states.STARTING,
    states.PROCESSING,
    states.REAPPLYING,
    states.ENROLLING,
    states.ABORTING,
)
"""12.x states a node cannot be imported in: 12.x is working on it."""


@dataclasses.dataclass
class Plan:
    """An import, as :func:`judge` found it."""

    where: str
    nodes: list[UpstreamNode] = dataclasses.field(default_factory=list)
    """Nodes new here: imported."""
    nodes_present: list[str] = dataclasses.field(default_factory=list)
    rules: list[tuple[dict[str, Any], dict[str, Any]]] = dataclasses.field(
        default_factory=list
    )
    """Rules new here: (12.x's, as validated here)."""
    rules_present: list[str] = dataclasses.field(default_factory=list)
    cannot: list[str] = dataclasses.field(default_factory=list)
    """What cannot come across, each named (the rest is imported)."""
    blockers: list[str] = dataclasses.field(default_factory=list)
    """Why the import must not run now (nothing is written while any)."""

    def seeds(self) -> list[UpstreamNode]:
        """The nodes whose latest stored data starts their history."""
        return [n for n in self.nodes if n.processed is not None]

    def summary(self) -> dict[str, Any]:
        by_state: dict[str, int] = {}
        for node in self.nodes:
            by_state[node.state] = by_state.get(node.state, 0) + 1
        return {
            "source": self.where,
            "nodes": len(self.nodes),
            "nodes_by_state": dict(sorted(by_state.items())),
            "nodes_already_here": len(self.nodes_present),
            "lookup_attributes": sum(len(n.attributes) for n in self.nodes),
            "stored_data": {
                "processed": sum(n.processed is not None for n in self.nodes),
                "unprocessed": sum(n.unprocessed is not None for n in self.nodes),
            },
            "history_seeded": len(self.seeds()),
            "rules": len(self.rules),
            "rules_already_here": len(self.rules_present),
            "cannot_import": list(self.cannot),
            "blocked_by": list(self.blockers),
        }


def _present(db: Database, table: Any, column: str, keys: list[str]) -> set[str]:
    found: set[str] = set()
    with db.connect() as conn:
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            query = sa.select(table.c[column]).where(table.c[column].in_(chunk))
            found.update(conn.execute(query).scalars())
    return found


def judge(db: Database, conf: cfg.ConfigOpts, upstream: Upstream) -> Plan:
    """The plan of importing ``upstream`` into ``db``."""
    from inspector.rules import validation  # the rule plugins load here only

    plan = Plan(where=upstream.where)
    nodes_table = models.Introspection.__table__
    here = _present(db, nodes_table, "uuid", [n.uuid for n in upstream.nodes])
    for node in upstream.nodes:
        what = f"node {node.uuid}"
        if node.uuid in here:
            plan.nodes_present.append(node.uuid)
            continue
        if node.state in WORKING or node.state not in states.ALL:
            plan.blockers.append(
                f"{what} is {node.state or 'in no state'} in ironic-inspector: "
                "let it finish or time out there first (doc/upgrade.md, the "
                "runbook's step 2)"
            )
            continue
        if node.state == states.WAITING and upstream.through_api:
            plan.blockers.append(
                f"{what} waits for its ramdisk in ironic-inspector, and its "
                "lookup attributes are not in the API: let it finish there "
                "first, or import from the database (--connection)"
            )
            continue
        if node.state == states.FINISHED and node.processed is None:
            why = (
                "12.x's API has none to give (none stored, or stored in Swift)"
                if not node.data_known
                else "none in 12.x's database (stored in Swift, or "
                "[processing]store_data = none there)"
            )
            plan.cannot.append(
                f"{what}: its introspection data ({why}); its status is imported"
            )
        for name in sorted(node.options):
            plan.cannot.append(
                f"{what}: option {name!r} (this service keeps no node options)"
            )
        plan.nodes.append(node)
    rules_table = models.Rule.__table__
    rules_here = _present(db, rules_table, "uuid", [r["uuid"] for r in upstream.rules])
    checks = validation.RuleChecks(
        new_language=False, allowed_hosts=tuple(conf.rules.api_call_allowed_hosts)
    )
    for rule in upstream.rules:
        name = f"rule {rule['uuid']} ({rule.get('description') or 'no description'})"
        if rule["uuid"] in rules_here:
            plan.rules_present.append(rule["uuid"])
            continue
        body = {
            key: rule[key]
            for key in ("uuid", "description", "scope", "conditions", "actions")
        }
        try:
            valid = validation.validate(body, checks)
        except exceptions.InvalidInput as exc:
            plan.cannot.append(f"{name}: refused here: {exc.message}")
            continue
        plan.rules.append((rule, valid))
    return plan
