"""The conductor's compiled rules: read and compiled once per change of the
rule set, seen at the next node when another process changes it."""

import uuid as uuid_mod
from typing import Any

from inspector.conductor import rule_cache
from inspector.db import engine
from inspector.db import rules as rules_db
from inspector.rules import runner, validation


def _body(priority: int = 0) -> dict[str, Any]:
    return validation.validate(
        {
            "uuid": str(uuid_mod.uuid4()),
            "priority": priority,
            "actions": [{"action": "add-trait", "name": "CUSTOM_X"}],
        }
    )


def test_compiled_once_per_change(db: engine.Database, monkeypatch: Any) -> None:
    compiled = []
    real = runner.compile_rules

    def counting(rules: Any) -> runner.RuleSet:
        compiled.append(len(rules))
        return real(rules)

    monkeypatch.setattr(runner, "compile_rules", counting)
    cache = rule_cache.RuleCache()
    first = cache.current(db)
    assert len(first) == 0 and compiled == [0]
    assert cache.current(db) is first  # unchanged: not read, not compiled
    assert compiled == [0]
    low = rules_db.create(db, _body())
    # another process (the API) changed the rules: the next node sees them
    other = engine.Database(str(db.engine.url))
    high = rules_db.create(other, _body(priority=5))
    after = cache.current(db)
    assert [r.uuid for r in after.rules] == [high["uuid"], low["uuid"]]
    assert compiled == [0, 2]
    assert cache.current(db) is after
    rules_db.delete(other, low["uuid"])
    assert [r.uuid for r in cache.current(db).rules] == [high["uuid"]]
    rules_db.delete_all(other)
    assert len(cache.current(db)) == 0
    assert compiled == [0, 2, 1, 0]
    other.dispose()


def test_the_version_moves_with_every_change(db: engine.Database) -> None:
    start = rules_db.version(db)
    rule = rules_db.create(db, _body())
    assert rules_db.version(db) == start + 1
    rules_db.delete(db, rule["uuid"])
    assert rules_db.version(db) == start + 2
    assert rules_db.delete_all(db) == 0
    assert rules_db.version(db) == start + 2  # nothing deleted, nothing changed


def test_built_in_rules_merged_and_recompiled_on_reload(db: engine.Database) -> None:
    from inspector.rules import builtin

    stored = rules_db.create(db, _body(priority=5))
    first = builtin.BuiltInSet("a.yaml", ({**_body(priority=9), "built_in": True},), 1)
    cache = rule_cache.RuleCache()
    compiled = cache.current(db, first)
    assert [r.uuid for r in compiled.rules] == [first.rules[0]["uuid"], stored["uuid"]]
    assert cache.current(db, first) is compiled  # neither moved
    second = builtin.BuiltInSet("a.yaml", ({**_body(priority=1), "built_in": True},), 2)
    after = cache.current(db, second)  # a SIGHUP reload: no database change
    assert [r.uuid for r in after.rules] == [stored["uuid"], second.rules[0]["uuid"]]
