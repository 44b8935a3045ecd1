"""The introspection rules a conductor runs, compiled once per change.

Every processing asks the database for the rule set's version (one
primary-key read, :func:`inspector.db.rules.version_and_rules`) and reads
and compiles the rules only when it moved: a rule created or deleted
through any API process, or by ``ironic-inspector-manage rules import``,
raises the version in the same transaction, so a conductor in another
process sees the change at its next node. Nothing is pushed between
processes: the cost per node is that one read (the rules themselves are
read once per change), the staleness none.
"""

import threading
import weakref
from typing import Any

from inspector.db import rules as rules_db
from inspector.db.engine import Database
from inspector.processing.base import NodeContext
from inspector.rules import runner
from inspector.runtime import Runtime


class RuleCache:
    """One process's compiled rule set for one database."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version: int | None = None
        self._rules = runner.RuleSet(())

    def current(self, db: Database) -> runner.RuleSet:
        version, rules = rules_db.version_and_rules(db, self._version)
        if rules is None:
            return self._rules
        compiled = runner.compile_rules(rules)
        with self._lock:
            # two threads may both compile one change: the later read wins
            self._version, self._rules = version, compiled
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
    rule_set = cache_of(rt.db).current(rt.db)
    return rule_set.apply(data, ctx, runner.RunSettings.from_conf(rt.conf))
