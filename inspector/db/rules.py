"""Introspection rules kept in the database, as validated rule dicts."""

import collections
import json
from collections.abc import Collection, Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy import orm

from inspector import exceptions
from inspector.db import models
from inspector.db.engine import Database

CONDITION_COLUMNS = frozenset({"op", "field", "multiple", "invert"})
"""The condition keys kept in columns of their own (``CONDITION_KEYS`` of
:mod:`inspector.rules.validation`); the others are the condition's params."""


class RuleNotFound(exceptions.NotFound):
    template = "Rule %(uuid)s was not found"


class RuleExists(exceptions.Conflict):
    template = "Rule with UUID %(uuid)s already exists"


def _as_dict(row: models.Rule) -> dict[str, Any]:
    return _rule(row, row.conditions, row.actions)


def _rule(
    rule: Any, conditions: Iterable[Any], actions: Iterable[Any]
) -> dict[str, Any]:
    """A rule dict from its row and its conditions' and actions' rows (ORM
    objects or Core rows: the same attribute names)."""
    return {
        "uuid": rule.uuid,
        "description": rule.description,
        "scope": rule.scope,
        "conditions": [
            {
                "op": c.op,
                "field": c.field,
                "multiple": c.multiple,
                "invert": c.invert,
                **json.loads(c.params),
            }
            for c in conditions
        ],
        "actions": [{"action": a.action, **json.loads(a.params)} for a in actions],
    }


def _params(item: dict[str, Any], reserved: Collection[str]) -> str:
    return json.dumps(
        {k: v for k, v in item.items() if k not in reserved}, sort_keys=True
    )


def create(db: Database, rule: dict[str, Any]) -> dict[str, Any]:
    """Store a rule that :func:`inspector.rules.validation.validate` returned."""
    row = models.Rule(
        uuid=rule["uuid"],
        created_at=models.utcnow(),
        description=rule["description"],
        scope=rule["scope"],
        disabled=False,
        conditions=[
            models.RuleCondition(
                op=c["op"],
                field=c["field"],
                multiple=c["multiple"],
                invert=c["invert"],
                params=_params(c, CONDITION_COLUMNS),
            )
            for c in rule["conditions"]
        ],
        actions=[
            models.RuleAction(action=a["action"], params=_params(a, {"action"}))
            for a in rule["actions"]
        ],
    )
    try:
        with db.session() as session:
            if session.get(models.Rule, rule["uuid"]) is not None:
                raise RuleExists(uuid=rule["uuid"])
            session.add(row)
            session.flush()
            return _as_dict(row)
    except sa_exc.IntegrityError:  # created concurrently with the same UUID
        raise RuleExists(uuid=rule["uuid"]) from None


def _query() -> Any:
    return sa.select(models.Rule).options(
        orm.selectinload(models.Rule.conditions), orm.selectinload(models.Rule.actions)
    )


def get(db: Database, uuid: str) -> dict[str, Any]:
    with db.session() as session:
        row = session.scalars(_query().where(models.Rule.uuid == uuid)).first()
        if row is None:
            raise RuleNotFound(uuid=uuid)
        return _as_dict(row)


_RULES = models.Rule.__table__
_CONDITIONS = models.RuleCondition.__table__
_ACTIONS = models.RuleAction.__table__
_ENABLED = (
    sa.select(_RULES)
    .where(_RULES.c.disabled.is_(False))
    .order_by(_RULES.c.created_at, _RULES.c.uuid)
)
_CONDITIONS_OF = (
    sa.select(_CONDITIONS)
    .where(_CONDITIONS.c.rule_uuid.in_(sa.bindparam("uuids", expanding=True)))
    .order_by(_CONDITIONS.c.id)
)
_ACTIONS_OF = (
    sa.select(_ACTIONS)
    .where(_ACTIONS.c.rule_uuid.in_(sa.bindparam("uuids", expanding=True)))
    .order_by(_ACTIONS.c.id)
)
"""Built once: every processing reads the enabled rules."""


def list_all(db: Database) -> list[dict[str, Any]]:
    """Every enabled rule, oldest first: the order they run in.

    Core queries on one connection, not an ORM session: this runs at
    every processing, mostly finding no rule at all (one statement then;
    three when there are rules), and a session's set-up cost several
    times the query's.
    """
    with db.connect() as conn:
        rules = conn.execute(_ENABLED).all()
        if not rules:
            return []
        uuids = {"uuids": [r.uuid for r in rules]}
        conditions: dict[str, list[Any]] = collections.defaultdict(list)
        for c in conn.execute(_CONDITIONS_OF, uuids):
            conditions[c.rule_uuid].append(c)
        actions: dict[str, list[Any]] = collections.defaultdict(list)
        for a in conn.execute(_ACTIONS_OF, uuids):
            actions[a.rule_uuid].append(a)
    return [_rule(r, conditions[r.uuid], actions[r.uuid]) for r in rules]


def delete(db: Database, uuid: str) -> None:
    with db.session() as session:
        row = session.get(models.Rule, uuid)
        if row is None:
            raise RuleNotFound(uuid=uuid)
        session.delete(row)


def delete_all(db: Database) -> int:
    with db.session() as session:
        rows = list(session.scalars(sa.select(models.Rule)))
        for row in rows:
            session.delete(row)
        return len(rows)
