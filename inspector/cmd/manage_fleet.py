"""ironic-inspector-manage's hardware history and fleet view commands:
``history NODE`` and ``changes NODE`` (a node's runs and hardware changes,
newest first), and ``inventory list | summary | outliers | cabling`` (the
fleet view, as ``GET /v1/inventory`` and its siblings answer). Each reads
the database directly."""

import json
from typing import Any

from oslo_config import cfg

from inspector import arguments
from inspector.cmd.tables import table

COMMANDS = ("history", "changes", "inventory")
LIMIT_HELP = "at most N rows; 0: [DEFAULT]api_max_limit, the most the API gives"
HISTORY_ROWS = 50
"""Rows ``history`` and ``changes`` show without ``--limit`` (at most
``[DEFAULT]api_max_limit``)."""


def add_parser(subparsers: Any) -> None:
    """``history``, ``changes`` and ``inventory``."""
    for name, text in (
        ("history", "a node's runs, newest first, with how many components changed"),
        ("changes", "a node's hardware changes, newest run first"),
    ):
        command = subparsers.add_parser(name, help=text)
        command.add_argument("node", help="node UUID or name")
        command.add_argument(
            "--limit", type=int, help=f"{LIMIT_HELP} (default {HISTORY_ROWS})"
        )
        command.add_argument("--json", action="store_true")

    inventory = subparsers.add_parser(
        "inventory", help="the fleet view: every node's latest hardware record"
    )
    actions = inventory.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="the nodes' facts, by UUID")
    listing.add_argument("--fields", help="comma-separated facts (default: all)")
    listing.add_argument("--limit", type=int, default=0, help=LIMIT_HELP)
    listing.add_argument("--marker", help="the UUID of the last node seen")
    summary = actions.add_parser("summary", help="how many nodes per value")
    summary.add_argument("--group-by", dest="group_by", default="product")
    for parser in (listing, summary):
        parser.add_argument(
            "--filter",
            action="append",
            default=[],
            metavar="FACT=VALUE",
            help="only nodes with this value of a fact (repeatable)",
        )
    for name, text in (
        ("outliers", "nodes unlike most of their peers"),
        ("cabling", "switch links and cabling problems"),
    ):
        # the status is for scripts and monitoring, as pxe-filter list's
        text += "; exit status 1 when there are any, 0 when there are none"
        actions.add_parser(name, help=text, description=text)
    for parser in actions.choices.values():
        parser.add_argument("--json", action="store_true")


HISTORY_COLUMNS: tuple[str, ...] = (
    "uuid",
    "started_at",
    "finished_at",
    "state",
    "changes",
    "source",
    "interface",
    "error",
)
CHANGE_COLUMNS = ("run", "finished_at", "component", "kind", "field", "before", "after")


def _history(conf: cfg.ConfigOpts) -> int:
    """``history`` and ``changes``: read from the database, as the API."""
    from inspector.db import engine, hardware_runs, introspections, migration

    limit = min(HISTORY_ROWS, conf.api_max_limit)
    if conf.command.limit is not None:
        limit = arguments.limit(conf.command.limit, conf.api_max_limit, name="--limit")
    db = engine.from_conf(conf)
    migration.ensure_schema(db)
    uuid = hardware_runs.node_by_name(db, conf.command.node) or conf.command.node
    rows: list[dict[str, Any]]
    if conf.command.name == "history":
        entries = hardware_runs.history(db, uuid, limit=limit)
        rows = [
            {
                "uuid": e.uuid,
                "started_at": e.started_at.isoformat(),
                "finished_at": e.finished_at.isoformat(),
                "state": e.state,
                "error": e.error,
                "changes": e.changes,
                "source": e.source,
                "interface": e.interface,
            }
            for e in entries
        ]
        columns = HISTORY_COLUMNS
    else:
        rows, _next = hardware_runs.changes(db, uuid, limit=limit)
        columns = CHANGE_COLUMNS
    if not rows and not hardware_runs.exists(db, uuid):
        introspections.get(db, uuid)  # never introspected: not found
    if conf.command.json:
        print(json.dumps(rows, indent=2))
        return 0

    def cell(value: Any) -> Any:
        if isinstance(value, dict | list):
            return json.dumps(value, sort_keys=True)
        return value

    print(table([{k: cell(v) for k, v in r.items()} for r in rows], columns))
    return 0


INVENTORY_COLUMNS = {
    "outliers": ("node", "fact", "value", "expected", "peers"),
    "summary": ("value", "count"),
    "cabling": ("kind", "detail", "nodes"),
}
"""The tables' columns; a node is shown as ``UUID (name)`` when its latest
run knew its name (``--json`` answers as the API: UUIDs)."""


def named(uuid: str, names: dict[str, str | None]) -> str:
    """A node as the tables show it: ``UUID (name)``, or its UUID alone."""
    name = names.get(uuid)
    return f"{uuid} ({name})" if name else uuid


def _inventory(conf: cfg.ConfigOpts) -> int:
    from inspector.db import engine, fleet, migration
    from inspector.fleet import cabling, expected, outliers, queries

    command, opts = conf.command, conf.inventory
    filters = arguments.fact_filters(getattr(command, "filter", None) or [])
    db = engine.from_conf(conf)
    migration.ensure_schema(db)
    rows: Any
    if command.action == "list":
        fields = arguments.names(command.fields) if command.fields else None
        rows = queries.page(
            fleet.snapshot(db).facts,
            fields=fields,
            filters=filters,
            limit=arguments.limit(command.limit, conf.api_max_limit, name="--limit"),
            marker=command.marker,
        )
        columns = tuple(rows[0]) if rows else ("uuid", *(fields or queries.FACTS))
    elif command.action == "summary":
        rows = queries.summary(fleet.snapshot(db).facts, command.group_by, filters)
        columns = INVENTORY_COLUMNS["summary"]
    elif command.action == "outliers":
        facts = fleet.snapshot(db).facts
        rows = outliers.find(
            facts,
            peer_facts=list(opts.peer_facts),
            min_peers=opts.min_peers,
            share=opts.peer_share,
        )
        if not command.json:
            names = {node["uuid"]: node.get("name") for node in facts}
            rows = [{**row, "node": named(row["uuid"], names)} for row in rows]
        columns = INVENTORY_COLUMNS["outliers"]
    else:
        rules = expected.configured(opts.expected_cabling)
        nodes = fleet.snapshot(db).links
        view = cabling.view(nodes, rules)
        if command.json:
            print(json.dumps(view, indent=2))
        else:
            names = {node["uuid"]: node.get("name") for node in nodes}
            problems = [
                {**problem, "nodes": [named(u, names) for u in problem["nodes"]]}
                for problem in view["problems"]
            ]
            print(
                table(
                    view["links"],
                    (
                        "switch_name",
                        "switch_id",
                        "port_id",
                        "node",
                        "node_name",
                        "nic",
                        "mac",
                    ),
                )
            )
            print()
            print(table(problems, INVENTORY_COLUMNS["cabling"]))
        return 1 if view["problems"] else 0
    print(json.dumps(rows, indent=2) if command.json else table(rows, columns))
    return 1 if command.action == "outliers" and rows else 0


def run(conf: cfg.ConfigOpts) -> int:
    if conf.command.name == "inventory":
        return _inventory(conf)
    return _history(conf)
