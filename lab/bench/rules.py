"""The CPU that the introspection rules cost for one machine (issue 34).

``python -m lab bench-rules`` (``make bench-rules``) builds 200 rules of the
kinds operators write (comparisons on the inventory, a regex on the vendor,
a network check over every interface, a condition on the node; one rule in
fifty applies and sets node fields from the data), then runs them on
``tests/data/ipa-inventory.json`` for one node, many times, and prints the
microseconds of CPU per machine (``time.process_time``):

- ``compiled``: the rule set compiled once, as the conductor runs it
  between two changes of the rules;
- ``per-call``: the rules compiled on every call (what ran per node before
  the compile-once change; also what ``apply_rules`` on dicts costs);
- ``db: read rules``: reading the 200 rules from SQLite, what every node
  paid before (``rules.list_all``); ``db: version``: the one read a node
  pays now while the rules do not change (``rules.version_and_rules``).

It measures only; nothing passes or fails.
"""

import argparse
import copy
import json
import time
from collections.abc import Callable
from typing import Any

from lab import checkout

INVENTORY = checkout.ROOT / "tests" / "data" / "ipa-inventory.json"


def rule_bodies(count: int) -> list[dict[str, Any]]:
    """``count`` rules of four kinds; one in fifty applies."""
    bodies = []
    for i in range(count):
        applies = i % 50 == 49
        kind = i % 4
        if kind == 0:
            condition = {
                "op": "ge" if applies else "gt",
                "field": "inventory.memory.physical_mb",
                "value": 0 if applies else 10_000_000 + i,
            }
        elif kind == 1:
            condition = {
                "op": "matches",
                "field": "inventory.system_vendor.manufacturer",
                "value": ".*" if applies else f"Vendor{i}.*",
            }
        elif kind == 2:
            condition = {
                "op": "in-net",
                "field": "inventory.interfaces[*].ipv4_address",
                "value": "0.0.0.0/0" if applies else f"10.{i}.0.0/16",
            }
        else:
            condition = {
                "op": "ge" if applies else "lt",
                "field": "node://properties.cpus",
                "value": 0 if applies else -i,
            }
        bodies.append(
            {
                "description": f"rule {i}",
                "conditions": [
                    condition,
                    {"op": "is-empty", "field": "inventory.no_such_field"},
                ],
                "actions": [
                    {
                        "action": "set-attribute",
                        "path": f"/extra/rule_{i}",
                        "value": "{data[inventory][cpu][model_name]}",
                    },
                    {"action": "add-trait", "name": f"CUSTOM_RULE_{i}"},
                ],
            }
        )
    return bodies


def _per_call(work: Callable[[], object], iterations: int, repeats: int = 5) -> float:
    """Microseconds of CPU per call of ``work`` (after a warm-up): the
    least of ``repeats`` runs, the one the other processes of a shared
    machine disturbed least."""
    for _ in range(min(50, iterations)):
        work()
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        for _ in range(iterations):
            work()
        best = min(best, time.process_time() - started)
    return best / iterations * 1e6


def measure(count: int, iterations: int) -> dict[str, float]:
    from inspector.hooks.base import NodeContext
    from inspector.rules import runner, validation

    data = json.loads(INVENTORY.read_text())
    rules = [validation.validate(body) for body in rule_bodies(count)]
    node = {"uuid": "n1", "properties": {"cpus": 8}, "extra": {}, "traits": []}

    def ctx() -> NodeContext:
        return NodeContext(uuid="n1", node=copy.deepcopy(node), ports={})

    results = {}
    compile_once = getattr(runner, "compile_rules", None)
    if compile_once is not None:
        rule_set = compile_once(rules)
        results["compiled"] = _per_call(lambda: rule_set.apply(data, ctx()), iterations)
    results["per-call"] = _per_call(
        lambda: runner.apply_rules(rules, data, ctx()), max(1, iterations // 10)
    )
    results["context only"] = _per_call(ctx, iterations)
    results.update(_database(rules, iterations))
    return results


def _database(rules: list[dict[str, Any]], iterations: int) -> dict[str, float]:
    import tempfile

    from inspector.db import engine, migration
    from inspector.db import rules as rules_db

    with tempfile.TemporaryDirectory() as tmp:
        db = engine.Database(f"sqlite:///{tmp}/rules.sqlite")
        migration.upgrade(db)
        for rule in rules:
            rules_db.create(db, rule)
        known = rules_db.version(db)
        results = {
            "db: read rules": _per_call(
                lambda: rules_db.list_all(db), max(1, iterations // 10)
            ),
            "db: version": _per_call(
                lambda: rules_db.version_and_rules(db, known), iterations
            ),
        }
        db.dispose()
    return results


def run(args: argparse.Namespace) -> int:
    """``python -m lab bench-rules``: ``--rules`` rules, ``--iterations``."""
    results = measure(args.rules, args.iterations)
    for name, micros in results.items():
        print(f"{name:>14}: {micros:9.1f} us CPU per machine ({args.rules} rules)")
    print("(the least of 5 runs; compiled and context only include the")
    print("node context's copy that every run makes)")
    return 0
