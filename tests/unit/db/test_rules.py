"""Introspection rules kept in the database."""

from typing import Any

import pytest
import sqlalchemy as sa

from inspector.db import engine
from inspector.db import rules as rules_db
from inspector.rules import validation
from tests.unit.db import statements


def test_condition_columns_are_the_condition_keys() -> None:
    # db.rules keeps its own copy so the API's rule storage does not import
    # the rule plugins; the two must name the same keys
    assert rules_db.CONDITION_COLUMNS == validation.CONDITION_KEYS


def _rule(n: int, disabled: bool = False) -> dict[str, Any]:
    return {
        "uuid": f"{n:08d}-2222-4333-8444-555555555555",
        "description": f"rule {n}",
        "scope": None if n % 2 else "rack-1",
        "conditions": [
            {
                "op": "eq",
                "field": f"memory_mb{n}",
                "multiple": "any",
                "invert": False,
                "value": n,
            },
            {
                "op": "ge",
                "field": "cpus",
                "multiple": "all",
                "invert": True,
                "value": 2 * n,
            },
        ][: 1 + n % 2],
        "actions": [
            {"action": "set-attribute", "path": f"/extra/r{n}", "value": n},
            {"action": "add-trait", "name": f"CUSTOM_{n}"},
        ][: 2 - n % 2],
    }


def test_enabled_rules_are_read_with_their_own_conditions_and_actions(
    db: engine.Database,
) -> None:
    from inspector.db import rules as rules_db

    seen = statements.recorded(db)
    assert rules_db.list_all(db) == []
    assert seen == ["SELECT"]  # no rule: one statement
    created = [rules_db.create(db, _rule(n)) for n in (3, 1, 2, 4)]
    off = rules_db.create(db, _rule(5))
    with db.engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE rules SET disabled = :t WHERE uuid = :u"),
            {"t": True, "u": off["uuid"]},
        )
    seen.clear()
    listed = rules_db.list_all(db)
    assert seen == ["SELECT"] * 3
    # in the order they were created, each as the rules API returns it
    assert listed == created
    assert listed == [rules_db.get(db, r["uuid"]) for r in created]
    assert [len(r["conditions"]) for r in listed] == [2, 2, 1, 1]
    assert listed[0]["conditions"][1] == {
        "op": "ge",
        "field": "cpus",
        "multiple": "all",
        "invert": True,
        "value": 6,
    }


def test_a_rule_is_created_once_and_deleted_with_its_parts(
    db: engine.Database,
) -> None:
    first, second = _rule(1), _rule(2)
    rules_db.create(db, first)
    with pytest.raises(rules_db.RuleExists):
        rules_db.create(db, first)
    rules_db.create(db, second)
    rules_db.delete(db, first["uuid"])
    with pytest.raises(rules_db.RuleNotFound):
        rules_db.get(db, first["uuid"])
    with pytest.raises(rules_db.RuleNotFound):
        rules_db.delete(db, first["uuid"])
    assert [r["uuid"] for r in rules_db.list_all(db)] == [second["uuid"]]
    assert rules_db.delete_all(db) == 1
    assert rules_db.list_all(db) == []
    with db.connect() as conn:
        for table in ("rule_conditions", "rule_actions"):
            left = conn.execute(sa.text(f"SELECT COUNT(*) FROM {table}")).scalar()
            assert left == 0, table
