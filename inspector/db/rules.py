"""Introspection rules kept in the database, as validated rule dicts."""

import json
from collections.abc import Collection
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
    conditions = [
        {
            "op": c.op,
            "field": c.field,
            "multiple": c.multiple,
            "invert": c.invert,
            **json.loads(c.params),
        }
        for c in row.conditions
    ]
    actions = [{"action": a.action, **json.loads(a.params)} for a in row.actions]
    return {
        "uuid": row.uuid,
        "description": row.description,
        "scope": row.scope,
        "conditions": conditions,
        "actions": actions,
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


_ENABLED = (
    _query()
    .where(models.Rule.disabled.is_(False))
    .order_by(models.Rule.created_at, models.Rule.uuid)
)
"""Built once (read at every processing: its cache key is computed once)."""


def list_all(db: Database) -> list[dict[str, Any]]:
    """Every enabled rule, oldest first: the order they run in."""
    with db.session() as session:
        return [_as_dict(row) for row in session.scalars(_ENABLED)]


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
