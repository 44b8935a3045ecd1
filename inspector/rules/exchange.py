"""``ironic-inspector-manage rules export`` and ``rules import``: the
stored rules as a document, and a document as rules to create.

Two formats: ``inspector`` (ours: the rules as the API answers them) and
``ironic`` (Ironic's inspection-rule language,
:mod:`inspector.rules.ironic_format`). A rule one side cannot express
stops the whole export or import, naming the rule and the construct:
nothing is dropped, nothing half-done.

Sensitive rules: both formats mask their values unless ``--with-secrets``
(exports end up in repositories and tickets). A masked rule is refused by
import, naming it; Ironic's API refuses one too (its ``args`` is then text,
not a list or an object), so a masked export never runs anywhere with
``***`` for a value. Either way the export is made by an administrator
reading the database through the manage command, never through the API.
"""

from typing import Any

from inspector import exceptions
from inspector.rules import (
    ironic_export,
    ironic_format,
    ironic_import,
    masking,
    validation,
)

INSPECTOR = "inspector"
IRONIC = "ironic"
FORMATS = (INSPECTOR, IRONIC)
"""What ``--format`` may name, ours first (the default)."""
COMPARED_AS_TEXT = (
    "Ironic compares its variables as text (a number against one fails its inspection)"
)
TEXT_NOTES = {
    **dict.fromkeys(("lt", "le", "gt", "ge"), COMPARED_AS_TEXT),
    "is-true": "Ironic's holds only on the text true or yes (any case), "
    "not on a number, on, or 1",
    "is-false": "Ironic's holds only on the text false or no (any case), "
    "not on a missing or null value, a number, off, or 0",
}
"""What an exported condition does differently in Ironic (told on export)."""
IRONIC_DEFECTS = {
    "extend-plugin-data": "Ironic 39 fails the inspection when the list "
    "exists already (it stores its masked view of the data: 'Object of type "
    "ShallowMaskList is not JSON serializable')",
    "unset-plugin-data": "Ironic 39 never removes the key (its view of the "
    "data is not a dict, so the key is never found)",
}
"""Actions Ironic 39 runs wrongly (measured against it), told on export and
on import: here they do what they say."""


def _defects(rules: list[dict[str, Any]], key: str) -> list[str]:
    found = []
    for index, rule in enumerate(rules):
        for ai, action in enumerate(rule.get("actions") or []):
            op = action.get(key) if isinstance(action, dict) else None
            defect = IRONIC_DEFECTS.get(op) if isinstance(op, str) else None
            if defect:
                found.append(
                    f"{ironic_format.rule_name(index, rule)}: actions[{ai}] "
                    f"({op}): {defect}"
                )
    return found


def import_notes(items: Any, fmt: str) -> list[str]:
    """What Ironic runs differently from us in the rules of a document
    being imported (its actions with a known defect)."""
    if fmt != IRONIC:
        return []
    try:
        rules = ironic_import.rules_of(items, "")
    except exceptions.InvalidInput:
        return []
    return [
        f"{note}; here it does what it says"
        for note in _defects([r for r in rules if isinstance(r, dict)], "op")
    ]


def export(
    rules: list[dict[str, Any]], fmt: str, with_secrets: bool = False
) -> list[dict[str, Any]]:
    """The document for the stored ``rules`` (in their running order).

    :raises Untranslatable: a rule Ironic cannot express.
    """
    if fmt == IRONIC:
        document = [
            ironic_export.to_ironic(rule, ironic_format.rule_name(index, rule))
            for index, rule in enumerate(rules)
        ]
    else:
        # "language" is kept, not told: an import is of the newest language
        document = [{k: v for k, v in r.items() if k != "language"} for r in rules]
    return document if with_secrets else [masking.masked(r) for r in document]


def warnings(
    rules: list[dict[str, Any]], fmt: str, with_secrets: bool = False
) -> list[str]:
    """What an export in ``fmt`` carries that the target runs differently,
    and the sensitive rules it masked."""
    found = []
    if not with_secrets:
        found = [
            f"{ironic_format.rule_name(index, rule)}: sensitive, its values "
            "masked (--with-secrets writes them)"
            for index, rule in enumerate(rules)
            if rule.get("sensitive")
        ]
    if fmt != IRONIC:
        return found
    for index, rule in enumerate(rules):
        for ci, cond in enumerate(rule.get("conditions") or []):
            note = TEXT_NOTES.get(cond["op"])
            if note:
                found.append(
                    f"{ironic_format.rule_name(index, rule)}: conditions[{ci}] "
                    f"({cond['op']}): {note}"
                )
        if rule.get("sensitive") and with_secrets:
            found.append(
                f"{ironic_format.rule_name(index, rule)}: sensitive, written "
                "with its values"
            )
    return found + _defects(rules, "action")


def to_create(
    items: Any, fmt: str, source: str, checks: validation.RuleChecks
) -> list[dict[str, Any]]:
    """The validated rules of a document to import, every one checked
    before any is created.

    :raises InvalidInput: naming the rule and the construct or field.
    """
    if fmt == IRONIC:
        try:
            items = ironic_import.rules_of(items, source)
        except exceptions.InvalidInput as exc:
            raise exceptions.InvalidInput(
                exc.message + format_hint(items, fmt)
            ) from None
    elif not isinstance(items, list):
        raise exceptions.InvalidInput(
            f"{source} must hold a JSON list of rules" + format_hint(items, fmt)
        )
    rules = []
    for index, item in enumerate(items):
        name = f"{source}: {ironic_format.rule_name(index, item)}"
        if isinstance(item, dict) and masking.is_masked(item):
            raise exceptions.InvalidInput(
                f"{name} is a sensitive rule exported masked: export it with "
                "--with-secrets to import it"
            )
        if not isinstance(item, dict):
            raise exceptions.InvalidInput(f"{name}: must be an object (a rule)")
        try:
            if fmt == INSPECTOR:  # as the API would take it (its message too)
                body = {k: v for k, v in item.items() if k not in ("links", "built_in")}
                rules.append(validation.validate(body, checks))
            else:
                rules.append(
                    validation.validate(ironic_import.from_ironic(item, ""), checks)
                )
        except exceptions.InvalidInput as exc:
            problem = exc.message.removeprefix("Invalid rule: ").removeprefix(": ")
            raise exceptions.InvalidInput(
                f"{name}: {problem}" + format_hint(item, fmt)
            ) from None
    return rules


def written_in(document: Any) -> str | None:
    """The format the shape of a document (or of one rule) shows, when it
    shows one: Ironic's conditions and actions are ``{op, args}``, ours
    ``{op, field, ...}`` and ``{action, ...}``."""
    if isinstance(document, dict) and "inspection_rules" in document:
        return IRONIC  # Ironic's API answer
    items = document if isinstance(document, list) else [document]
    for item in items:
        if not isinstance(item, dict):
            continue
        conditions = _objects(item.get("conditions"))
        actions = _objects(item.get("actions"))
        if any("args" in part for part in conditions + actions) or any(
            "op" in action for action in actions
        ):
            return IRONIC
        if any("action" in action for action in actions) or any(
            "field" in condition for condition in conditions
        ):
            return INSPECTOR
    return None


def _objects(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def format_hint(document: Any, fmt: str) -> str:
    """What to add to a refusal of ``document`` read as ``fmt``: the
    format it looks written in, when that is the other one."""
    seen = written_in(document)
    if seen is None or seen == fmt:
        return ""
    what = "Ironic's rule language" if seen == IRONIC else "this service's format"
    return (
        f" (it looks written in {what}: try --format {seen}; "
        f"formats: {', '.join(FORMATS)})"
    )
