"""``openstack baremetal introspection rule import|test``: introspection
rules in the language of API 1.24 (priority, sensitive rules, ``!op``,
variables, loops: doc/rules.md) and trying them with ``POST
/v1/rules/test``.

``rule import`` replaces the stock one under the same name (registered in
``openstack.extension``, which OpenStackClient loads after the plugins'
groups, as :mod:`inspector.osc.introspection`'s ``start``): the stock one
creates rules at the version it negotiated, 1.0 by default, where the
service refuses every construct of 1.24. It reads the same files (JSON or
YAML, one rule or a list). Loaded only by OpenStackClient.
"""

import sys
from typing import Any

import yaml
from cliff import lister, show

from inspector.osc import columns, session

VERSION = "1.24"
"""rule-language and rules-test."""


def _read(path: str) -> Any:
    """A JSON or YAML file (``-``: standard input).

    :raises RuntimeError: it cannot be read or parsed.
    """
    try:
        if path == "-":
            return yaml.safe_load(sys.stdin)
        with open(path, encoding="utf-8") as handle:
            return yaml.safe_load(handle)  # JSON is YAML too
    except (OSError, yaml.YAMLError) as exc:
        raise RuntimeError(f"Cannot read {path}: {exc}") from exc


def _rules_in(path: str) -> list[Any]:
    """The rules of a file: one rule, or a list of them."""
    found = _read(path)
    return found if isinstance(found, list) else [found]


def _manager(command: Any) -> Any:
    # OpenStackClient's app has a client manager; cliff's base App has not
    return getattr(command.app, "client_manager")  # noqa: B009


class RuleImportCommand(lister.Lister):
    """Import one or several introspection rules from a JSON/YAML file
    (API 1.24: priority, sensitive, loops, variables)."""

    COLUMNS = ("UUID", "Description", "Priority", "Sensitive")

    def get_parser(self, prog_name: str) -> Any:
        parser = super().get_parser(prog_name)
        parser.add_argument(
            "file",
            help="JSON or YAML file to import, may contain one or several rules",
        )
        return parser

    def take_action(self, parsed_args: Any) -> tuple[tuple[str, ...], list[Any]]:
        manager = _manager(self)
        rules = _rules_in(parsed_args.file)
        created: list[dict[str, Any]] = []
        for index, rule in enumerate(rules, 1):
            try:
                created.append(
                    session.call(manager, "POST", "/v1/rules", VERSION, body=rule)
                )
            except RuntimeError as exc:
                done = ", ".join(r["uuid"] for r in created) or "none"
                raise RuntimeError(
                    f"Rule {index} of {len(rules)} not imported: {exc} "
                    f"(imported before it: {done})"
                ) from None
        return self.COLUMNS, [
            (r["uuid"], r.get("description"), r.get("priority"), r.get("sensitive"))
            for r in created
        ]


class RuleResults(columns.JSONColumn):
    """The rules a test ran: one line each for people (its verdict), the
    whole trace (conditions, values, actions) for scripts."""

    def human_readable(self) -> str:
        return "\n".join(_verdict(rule) for rule in self._value)


def _verdict(rule: dict[str, Any]) -> str:
    if rule.get("error"):
        verdict = f"error: {rule['error']}"
    elif not rule.get("in_scope", True):
        verdict = "not in scope"
    else:
        verdict = "matched" if rule.get("matched") else "not matched"
    return f"{rule.get('uuid')} (priority {rule.get('priority', 0)}): {verdict}"


FIELDS = (
    ("Would write", "would_write"),
    ("Error", "error"),
    ("Applied", "applied"),
    ("Rules", "rules"),
)
CHANGES = (
    ("Node patches", "node_patches"),
    ("Traits to add", "traits_to_add"),
    ("Traits to remove", "traits_to_remove"),
    ("Ports to create", "ports_to_create"),
    ("Ports to delete", "ports_to_delete"),
    ("Port patches", "port_patches"),
)


class RuleTestCommand(show.ShowOne):
    """Try rules on a node's stored data or a data file, writing nothing
    (API 1.24); exit status 1 when a rule would fail the node."""

    def get_parser(self, prog_name: str) -> Any:
        parser = super().get_parser(prog_name)
        parser.add_argument(
            "--node",
            help="node UUID or name: its Ironic node and ports, and its stored "
            "data unless --data is given",
        )
        parser.add_argument(
            "--data",
            metavar="FILE",
            help="introspection data, JSON or YAML (- for stdin)",
        )
        parser.add_argument(
            "--rule",
            action="append",
            default=[],
            metavar="UUID",
            help="a stored rule to try (repeatable)",
        )
        parser.add_argument(
            "--rule-file",
            action="append",
            default=[],
            metavar="FILE",
            help="new rules to try, not stored: a JSON or YAML file of one "
            "rule or a list (repeatable); without --rule and --rule-file, "
            "every stored rule",
        )
        return parser

    def body(self, parsed_args: Any) -> dict[str, Any]:
        """What ``POST /v1/rules/test`` is sent."""
        body: dict[str, Any] = {}
        if parsed_args.node:
            body["node_uuid"] = parsed_args.node
        if parsed_args.data:
            body["data"] = _read(parsed_args.data)
        rules: list[Any] = list(parsed_args.rule)
        for path in parsed_args.rule_file:
            rules += _rules_in(path)
        if rules:
            body["rules"] = rules
        if "node_uuid" not in body and "data" not in body:
            raise RuntimeError("Give --node NODE, --data FILE, or both")
        return body

    def take_action(self, parsed_args: Any) -> tuple[tuple[str, ...], tuple[Any, ...]]:
        answer = session.call(
            _manager(self),
            "POST",
            "/v1/rules/test",
            VERSION,
            body=self.body(parsed_args),
        )
        self.failed = answer.get("error") is not None
        changes = answer.get("changes") or {}
        values = [columns.value(answer.get(key)) for _title, key in FIELDS]
        values[-1] = RuleResults(answer.get("rules") or [])
        return (
            tuple(title for title, _key in FIELDS + CHANGES),
            tuple(values)
            + tuple(columns.value(changes.get(key)) for _title, key in CHANGES),
        )

    def run(self, parsed_args: Any) -> int:
        self.failed = False
        code = super().run(parsed_args)
        return 1 if self.failed and code == 0 else code
