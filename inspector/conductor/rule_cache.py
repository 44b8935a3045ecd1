"""The introspection rules a conductor runs, compiled once per change.

Every processing asks the database for the rule set's version (one
primary-key read, :func:`inspector.db.rules.version_and_rules`) and reads
and compiles the rules only when it moved: a rule created or deleted
through any API process, or by ``ironic-inspector-manage rules import``,
raises the version in the same transaction, so a conductor in another
process sees the change at its next node. Nothing is pushed between
processes: the cost per node is that one read (the rules themselves are
read once per change), the staleness none.

The built-in rules (``[rules]built_in_rules``, :mod:`inspector.rules.builtin`)
run with them, merged by priority; a reload of the file (SIGHUP) moves
their generation, which rebuilds the compiled set too.
"""

import threading
import weakref
from typing import Any

from inspector.db import rules as rules_db
from inspector.db.engine import Database
from inspector.hooks.base import NodeContext
from inspector.rules import builtin, runner
from inspector.runtime import Runtime


class RuleCache:
    """One process's compiled rule set for one database."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version: int | None = None
        self._generation: int | None = None
        self._stored: list[Any] = []
        self._rules = runner.RuleSet(())

    def current(
        self, db: Database, built_in: builtin.BuiltInSet | None = None
    ) -> runner.RuleSet:
        generation = built_in.generation if built_in is not None else None
        version, rules = rules_db.version_and_rules(db, self._version)
        if rules is None:
            if generation == self._generation:
                return self._rules
            rules = self._stored
        compiled = runner.compile_rules(
            builtin.merged(rules, built_in.rules if built_in is not None else ())
        )
        with self._lock:
            # two threads may both compile one change: the later read wins
            self._version, self._rules = version, compiled
            self._generation, self._stored = generation, rules
        return compiled


_CACHES: "weakref.WeakKeyDictionary[Database, RuleCache]" = weakref.WeakKeyDictionary()
_CACHES_LOCK = threading.Lock()


def cache_of(db: Database) -> RuleCache:
    with _CACHES_LOCK:
        found = _CACHES.get(db)
        if found is None:
            found = _CACHES[db] = RuleCache()
        return found


def apply_rules(rt: Runtime, data: dict[str, Any], ctx: NodeContext) -> list[str]:
    """Run the enabled rules of ``rt``'s database on the node."""
    rule_set = cache_of(rt.db).current(rt.db, builtin.current(rt.conf))
    return rule_set.apply(data, ctx, runner.RunSettings.from_conf(rt.conf))
