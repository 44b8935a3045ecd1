"""ironic-inspector-manage's ``import upstream``: a running
ironic-inspector 12.x deployment's nodes, statuses, lookup attributes,
rules and stored data, read from its database (``--connection``) or
its API (``--url``) and written here in one transaction
(:mod:`inspector.importing`); ``--dry-run`` says what would be imported
and what cannot be, writing nothing. Run again, it imports only what is
new."""

import json
import os
import sys
from typing import Any

from oslo_config import cfg


def add_parser(subparsers: Any) -> None:
    text = (
        "import a running ironic-inspector 12.x deployment: its nodes and "
        "statuses, lookup attributes, rules and stored data; each node's "
        "latest data starts its hardware history (doc/upgrade.md)"
    )
    importing = subparsers.add_parser("import", help=text, description=text)
    sources = importing.add_subparsers(dest="source", required=True)
    upstream = sources.add_parser(
        "upstream",
        help="from ironic-inspector 12.x",
        description="Read ironic-inspector 12.x's database (--connection) or, "
        "where it cannot be reached, its API (--url: no lookup attributes, "
        "so no node may wait for its ramdisk there), and write what is new "
        "here in one transaction.",
    )
    where = upstream.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--connection",
        metavar="URL",
        help="12.x's [database]connection (read only)",
    )
    where.add_argument("--url", help="12.x's API, e.g. http://HOST:5050")
    upstream.add_argument(
        "--token",
        default=os.environ.get("OS_TOKEN"),
        help="a keystone token for --url (default: $OS_TOKEN)",
    )
    upstream.add_argument(
        "--dry-run",
        action="store_true",
        help="print what would be imported and what cannot be; write nothing",
    )
    upstream.add_argument("--json", action="store_true")


def _lines(summary: dict[str, Any], dry_run: bool) -> list[str]:
    verb = "Would import" if dry_run else "Imported"
    states = ", ".join(f"{n} {s}" for s, n in summary["nodes_by_state"].items())
    data = summary["stored_data"]
    lines = [
        f"From {summary['source']}:",
        f"  {verb} {summary['nodes']} nodes ({states or 'none'}), "
        f"{summary['lookup_attributes']} lookup attributes, "
        f"{data['processed']} processed and {data['unprocessed']} unprocessed "
        f"data, {summary['history_seeded']} first runs of the hardware history, "
        f"{summary['rules']} rules",
    ]
    present = summary["nodes_already_here"], summary["rules_already_here"]
    if any(present):
        lines.append(
            f"  Already here (left as they are): {present[0]} nodes, {present[1]} rules"
        )
    if summary["cannot_import"]:
        lines.append(f"  Cannot import ({len(summary['cannot_import'])}):")
        lines += [f"    {item}" for item in summary["cannot_import"]]
    if summary["blocked_by"]:
        lines.append("  The import cannot run now:")
        lines += [f"    {item}" for item in summary["blocked_by"]]
    return lines


def run(conf: cfg.ConfigOpts) -> int:
    from inspector.db import engine, migration
    from inspector.importing import from_api, from_database, plan, write

    command = conf.command
    if command.connection:
        upstream = from_database.read(command.connection)
    else:
        upstream = from_api.read(command.url, command.token)
    db = engine.from_conf(conf)
    migration.ensure_schema(db)
    judged = plan.judge(db, conf, upstream)
    summary = judged.summary()
    if not command.dry_run and not judged.blockers:
        summary["written"] = write.apply(db, judged)
    if command.json:
        print(json.dumps(summary, indent=2, default=str))
    else:
        print("\n".join(_lines(summary, command.dry_run or bool(judged.blockers))))
    if judged.blockers:
        print(
            "Nothing imported: the nodes above are still being worked on by "
            "ironic-inspector",
            file=sys.stderr,
        )
        return 1
    return 0
