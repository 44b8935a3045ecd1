"""ironic-inspector-manage's ``rules`` commands: ``export`` and ``import``
(ours as JSON, or Ironic's language with ``--format ironic``:
:mod:`inspector.rules.exchange`) and ``test``, which tries the rules on a
node's stored data or a data file, writing nothing
(:mod:`inspector.rules.trial`)."""

import json
import sys
from typing import Any

from oslo_config import cfg

RULE_FORMATS = ("inspector", "ironic")
"""``--format``'s choices: :data:`inspector.rules.exchange.FORMATS`, not
imported for ``--help``'s sake."""


def add_parser(subparsers: Any) -> None:
    """The ``rules`` command and its actions."""
    rules = subparsers.add_parser("rules", help="introspection rules as JSON")
    rule_actions = rules.add_subparsers(dest="action", required=True)
    exporting = rule_actions.add_parser(
        "export", help="print every stored rule (JSON list)"
    )
    exporting.add_argument(
        "--with-secrets",
        action="store_true",
        help="sensitive rules with their values, not masked (a backup to "
        "import, or rules for Ironic to run); without it both formats mask them",
    )
    exporting.add_argument(
        "--format",
        choices=RULE_FORMATS,
        default="inspector",
        help="inspector (ours, the default) or ironic (what Ironic's POST "
        "/v1/inspection_rules takes, one rule per item)",
    )
    exporting.add_argument("--output", help="write to this file, not stdout")
    trying = rule_actions.add_parser(
        "test",
        help="run the rules on a node's stored data or a data file and print "
        "what they would do (JSON); writes nothing, calls no api-call",
    )
    trying.add_argument("--node", help="node UUID or name: its node, ports, data")
    trying.add_argument("--data", help="introspection data file (JSON; - for stdin)")
    trying.add_argument(
        "--rule", action="append", default=[], help="only this rule UUID (repeat)"
    )
    import_text = (
        "create the rules of a file: export's JSON list, or Ironic's rules "
        "with --format ironic; every rule is checked before any is created, "
        "a refusal names the file and the rule"
    )
    importing = rule_actions.add_parser(
        "import", help=import_text, description=import_text
    )
    importing.add_argument("file", help="path, or - for standard input")
    importing.add_argument(
        "--format",
        choices=RULE_FORMATS,
        default="inspector",
        help="inspector (export's output) or ironic (Ironic's rules: its "
        "API's answer, JSON, or its built-in rules file, YAML)",
    )
    importing.add_argument(
        "--dry-run",
        action="store_true",
        help="print the rules as they would be created, create nothing",
    )


def _read_text(path: str) -> str:
    from inspector import exceptions

    try:
        if path == "-":
            return sys.stdin.read()
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, ValueError) as exc:  # ValueError: not UTF-8
        raise exceptions.InvalidInput(f"Cannot read {path}: {exc}") from exc


def _read_json(path: str, hint: str = "") -> Any:
    from inspector import exceptions

    text = _read_text(path)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise exceptions.InvalidInput(f"Cannot read {path}: {exc}{hint}") from exc


def _test(conf: cfg.ConfigOpts, db: Any) -> int:
    from inspector import exceptions
    from inspector.baremetal.client import BaremetalClient
    from inspector.db import data_store
    from inspector.db import rules as rules_db
    from inspector.rules import builtin, runner, trial

    args = conf.command
    data = _read_json(args.data) if args.data else None
    node: dict[str, Any] = {"properties": {}, "extra": {}}
    ports: list[dict[str, Any]] = []
    if args.node:
        conf.set_override("max_retries", 0, group="ironic")
        baremetal = BaremetalClient(conf)
        node = baremetal.get_node(args.node)
        ports = baremetal.list_ports(node["uuid"])
        if data is None:
            data = data_store.for_conf(conf, db).get(node["uuid"], processed=True)
    if not isinstance(data, dict):
        raise exceptions.InvalidInput("Give --data FILE (a JSON object) or --node")
    built_in = builtin.current(conf)
    rules = (
        [built_in.get(uuid) or rules_db.get(db, uuid) for uuid in args.rule]
        if args.rule
        else builtin.merged(rules_db.list_all(db), built_in.rules)
    )
    answer = trial.run(rules, data, node, ports, runner.RunSettings.from_conf(conf))
    print(json.dumps(answer, indent=2))
    return 0 if answer["error"] is None else 1


def _read_rules_document(path: str, fmt: str) -> Any:
    """A rules file: JSON, or (the ironic format) Ironic's built-in YAML."""
    from inspector import exceptions

    if fmt != "ironic":
        return _read_json(
            path,
            " (--format inspector reads JSON, as export writes it; Ironic's "
            "rules, JSON or YAML: --format ironic; formats: "
            f"{', '.join(RULE_FORMATS)})",
        )
    import yaml

    text = _read_text(path)
    try:
        return yaml.safe_load(text)  # JSON is YAML too
    except yaml.YAMLError as exc:
        raise exceptions.InvalidInput(f"Cannot read {path}: {exc}") from exc


def run(conf: cfg.ConfigOpts) -> int:
    from inspector.db import engine, migration
    from inspector.db import rules as rules_db
    from inspector.rules import builtin, exchange, validation

    db = engine.from_conf(conf)
    migration.ensure_schema(db)
    command = conf.command
    if command.action == "export":
        stored = rules_db.list_all(db)  # built-in rules live in their file
        document = exchange.export(stored, command.format, command.with_secrets)
        notes = exchange.warnings(stored, command.format, command.with_secrets)
        for warning in notes:
            print(f"Note: {warning}", file=sys.stderr)
        text = json.dumps(document, indent=2)
        if command.output:
            with open(command.output, "w", encoding="utf-8") as handle:
                handle.write(text + "\n")
            print(f"Exported {len(document)} rules to {command.output}")
        else:
            print(text)
        return 0
    if command.action == "test":
        return _test(conf, db)
    path = command.file
    checks = validation.RuleChecks(
        allowed_hosts=tuple(conf.rules.api_call_allowed_hosts)
    )
    document = _read_rules_document(path, command.format)
    rules = exchange.to_create(document, command.format, path, checks)
    for note in exchange.import_notes(document, command.format):
        print(f"Note: {path}: {note}", file=sys.stderr)
    built_in = builtin.current(conf)
    if command.dry_run:
        for rule in rules:
            taken = built_in.get(rule["uuid"]) is not None
            state = "built-in" if taken else _stored_state(db, rule["uuid"])
            what = "would be created" if state is None else f"exists ({state}): skipped"
            print(f"Rule {rule['uuid']} ({rule['description'] or ''}): {what}")
        print(
            json.dumps(
                [{k: v for k, v in r.items() if k != "language"} for r in rules],
                indent=2,
            )
        )
        return 0
    created = skipped = 0
    for rule in rules:  # every rule is valid before any is created
        if built_in.get(rule["uuid"]) is not None:
            skipped += 1
            continue
        try:
            rules_db.create(db, rule)
            created += 1
        except rules_db.RuleExists:
            skipped += 1
    print(f"Imported {created} rules; {skipped} already existed (same UUID)")
    return 0


def _stored_state(db: Any, uuid: str) -> str | None:
    from inspector.db import rules as rules_db

    try:
        rules_db.get(db, uuid)
    except rules_db.RuleNotFound:
        return None
    return "stored"
