"""Built-in rules: ``[rules]built_in_rules``, a YAML list of rules kept in
a file, not in the database.

The file has the shape of Ironic's ``[inspection_rules]built_in_rules``: a
list of rules, each ``{uuid, description, priority, sensitive, phase,
conditions, actions}`` in Ironic's language (conditions and actions as
``{op, args, loop}``, translated by :mod:`inspector.rules.ironic_import`),
or in ours (actions as ``{action, ...}``), rule by rule. A rule without a
UUID gets Ironic's synthetic one, ``00000000-0000-0000-0000-<n>`` for the
n-th such rule (counted from 0), so the same file names the same rules on
both sides. Priority may be any integer, as Ironic's built-in rules.

Every process that runs rules or answers them loads the file when it is
built (:func:`install`: an invalid file refuses the start, naming the
file, the rule and the field) and again on SIGHUP (:func:`reload`: an
invalid file is logged with the same detail and the rules loaded before
stay). The set is process-wide; its ``generation`` moves with every load
so a conductor's compiled rule set is rebuilt
(:mod:`inspector.conductor.rule_cache`).

They run with the stored rules by priority, higher first; between rules
of one priority the stored rules run first (by creation), then the
built-in ones in the file's order, as Ironic sorts its stored rules and
then its built-in ones.
"""

import dataclasses
import logging
import threading
from collections.abc import Iterable
from typing import Any

from inspector import exceptions

PHASE = "main"

LOG = logging.getLogger(__name__)


class BuiltInRule(exceptions.Conflict):
    """A change asked of a built-in rule."""

    template = (
        "Rule %(uuid)s is a built-in rule (from [rules]built_in_rules): "
        "change the file and send the services SIGHUP"
    )


@dataclasses.dataclass(frozen=True)
class BuiltInSet:
    path: str
    """The file (empty: no built-in rules)."""
    rules: tuple[dict[str, Any], ...]
    """Validated rule dicts, in the file's order, each ``built_in: True``."""
    generation: int
    wanted: str = ""
    """The path last asked for; differs from ``path`` after a failed reload
    of another file (the rules of ``path`` stay)."""

    def get(self, uuid: str) -> dict[str, Any] | None:
        return next((r for r in self.rules if r["uuid"] == uuid), None)


def synthetic_uuid(index: int) -> str:
    """Ironic's UUID for the ``index``-th built-in rule without one."""
    return f"00000000-0000-0000-0000-{index:012x}"


def _is_ironic(item: dict[str, Any]) -> bool:
    parts = [*(item.get("conditions") or []), *(item.get("actions") or [])]
    return any(isinstance(p, dict) and "op" in p and "field" not in p for p in parts)


def parse(
    items: Any, path: str, allowed_hosts: Iterable[str] = ()
) -> list[dict[str, Any]]:
    """The validated rules of a built-in file's content.

    :raises ConfigError: naming the file, the rule and the field.
    """
    if items is None:
        return []
    # the plugins load only where a file is set
    from inspector.rules import ironic_format, ironic_import, validation

    if not isinstance(items, list):
        raise exceptions.ConfigError(
            f"Invalid built-in rules file {path}: must hold a YAML list of rules"
        )
    checks = validation.RuleChecks(allowed_hosts=tuple(allowed_hosts), built_in=True)
    rules: list[dict[str, Any]] = []
    seen: set[str] = set()
    synthetic = 0
    for index, item in enumerate(items):
        name = ironic_format.rule_name(index, item)
        try:
            if not isinstance(item, dict):
                raise exceptions.InvalidInput("must be a mapping (a rule)")
            body = dict(item)
            if _is_ironic(body):
                body = ironic_import.from_ironic(body, "")
            elif body.get("phase", PHASE) in (None, PHASE):
                body.pop("phase", None)  # Ironic's one phase: ours
            if not body.get("uuid"):
                body["uuid"] = synthetic_uuid(synthetic)
                synthetic += 1
            rule = validation.validate(body, checks)
        except exceptions.InvalidInput as exc:
            problem = exc.message.removeprefix("Invalid rule: ").removeprefix(": ")
            raise exceptions.ConfigError(
                f"Invalid built-in rules file {path}: {name}: {problem}"
            ) from None
        if rule["uuid"] in seen:
            raise exceptions.ConfigError(
                f"Invalid built-in rules file {path}: {name}: uuid: "
                f"{rule['uuid']} is used by an earlier rule of the file"
            )
        seen.add(rule["uuid"])
        rules.append({**rule, "built_in": True})
    return rules


def load(path: str, allowed_hosts: Iterable[str] = ()) -> list[dict[str, Any]]:
    """The rules of the file at ``path`` (none when empty).

    :raises ConfigError: an unreadable or invalid file, naming it.
    """
    if not path:
        return []
    import yaml

    try:
        with open(path, encoding="utf-8") as handle:
            items = yaml.safe_load(handle)
    except OSError as exc:
        raise exceptions.ConfigError(
            f"Invalid [rules]built_in_rules: cannot read {path}: {exc.strerror or exc}"
        ) from None
    except yaml.YAMLError as exc:
        raise exceptions.ConfigError(
            f"Invalid built-in rules file {path}: not YAML: {exc}"
        ) from None
    return parse(items, path, allowed_hosts)


_LOCK = threading.Lock()
_CURRENT: BuiltInSet | None = None
_GENERATION = 0


def _path(conf: Any) -> str:
    return str(conf.rules.built_in_rules or "")


def _set(path: str, rules: list[dict[str, Any]]) -> BuiltInSet:
    global _CURRENT, _GENERATION
    with _LOCK:
        _GENERATION += 1
        _CURRENT = BuiltInSet(path, tuple(rules), _GENERATION, path)
        return _CURRENT


def install(conf: Any) -> BuiltInSet:
    """Load the configured file (at a process's start).

    :raises ConfigError: an invalid file, naming the file, rule and field.
    """
    path = _path(conf)
    loaded = _set(path, load(path, conf.rules.api_call_allowed_hosts))
    if path:
        LOG.info("Loaded %d built-in rule(s) from %s", len(loaded.rules), path)
    return loaded


def reload(conf: Any) -> bool:
    """Load the configured file again (SIGHUP); a file that does not load
    is logged and the rules loaded before stay. Nothing to do in a process
    that never loaded them."""
    global _CURRENT
    if _CURRENT is None:
        return False
    path = _path(conf)
    try:
        install(conf)
    except exceptions.ConfigError as exc:
        with _LOCK:
            if _CURRENT is not None:
                _CURRENT = dataclasses.replace(_CURRENT, wanted=path)
        LOG.error(
            "%s; the %d built-in rule(s) loaded before stay",
            exc,
            len(_CURRENT.rules) if _CURRENT else 0,
        )
        return False
    return True


def current(conf: Any) -> BuiltInSet:
    """The process's built-in rules (loaded now if they were not: a
    command, a test)."""
    found = _CURRENT
    if found is None or found.wanted != _path(conf):
        return install(conf)
    return found


def merged(
    stored: Iterable[dict[str, Any]], built_in: Iterable[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The stored rules (in their running order) and the built-in ones, in
    the order they run: priority, higher first; for one priority the stored
    rules, then the built-in ones in the file's order."""
    both = [*stored, *built_in]
    # a stable sort keeps each side's own order within a priority
    both.sort(key=lambda r: -int(r.get("priority") or 0))
    return both
