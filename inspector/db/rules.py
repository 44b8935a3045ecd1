"""Introspection rules kept in the database, as validated rule dicts."""

import collections
import datetime
import json
from collections.abc import Collection, Iterable, Sequence
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

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


def _rule(
    rule: Any, conditions: Iterable[Any], actions: Iterable[Any]
) -> dict[str, Any]:
    """A rule dict from its row and its conditions' and actions' rows."""
    return {
        "uuid": rule.uuid,
        "description": rule.description,
        "scope": rule.scope,
        "priority": rule.priority,
        "sensitive": rule.sensitive,
        "language": rule.language,
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


_RULES = cast(sa.Table, models.Rule.__table__)
_CONDITIONS = cast(sa.Table, models.RuleCondition.__table__)
_ACTIONS = cast(sa.Table, models.RuleAction.__table__)
_VERSIONS = cast(sa.Table, models.RuleSetVersion.__table__)
_ENABLED = (
    sa.select(_RULES)
    .where(_RULES.c.disabled.is_(False))
    .order_by(_RULES.c.priority.desc(), _RULES.c.created_at, _RULES.c.uuid)
)
_VERSION = sa.select(_VERSIONS.c.version).where(_VERSIONS.c.id == 1)
_BUMP = (
    sa.update(_VERSIONS)
    .where(_VERSIONS.c.id == 1)
    .values(version=_VERSIONS.c.version + 1)
)
_RULE = sa.select(_RULES).where(_RULES.c.uuid == sa.bindparam("uuid"))
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


def _with_parts(conn: sa.Connection, rules: Sequence[Any]) -> list[dict[str, Any]]:
    """The rule dicts of ``rules`` (rows), their conditions and actions read
    in one statement each."""
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


def _bump(conn: sa.Connection) -> None:
    """Raise the rule set's version in the change's transaction."""
    if not conn.execute(_BUMP).rowcount:
        conn.execute(sa.insert(_VERSIONS), {"id": 1, "version": 2})


def version(db: Database) -> int:
    """The rule set's version: it moves with every change of the rules
    (one primary-key read; a conductor asks before every processing)."""
    with db.connect() as conn:
        found = conn.execute(_VERSION).scalar()
    return int(found) if found is not None else 0


def version_and_rules(db: Database, known: int | None) -> tuple[int, list[Any] | None]:
    """The version, and the enabled rules when it is not ``known``.

    The version is read first: the rules read after it are those of that
    version or of a later one, never of an earlier one, so a change made
    between the two reads is read again at the next call (the version has
    moved), never missed."""
    with db.connect() as conn:
        found = conn.execute(_VERSION).scalar()
        current = int(found) if found is not None else 0
        if current == known:
            return current, None
        return current, _with_parts(conn, conn.execute(_ENABLED).all())


def create(db: Database, rule: dict[str, Any]) -> dict[str, Any]:
    """Store a rule that :func:`inspector.rules.validation.validate` returned."""
    try:
        with db.begin() as conn:
            return insert(conn, rule)
    except sa_exc.IntegrityError:  # created concurrently with the same UUID
        raise RuleExists(uuid=rule["uuid"]) from None


def exists(conn: sa.Connection, uuid: str) -> bool:
    """Whether a rule of ``uuid`` is stored (in the caller's transaction)."""
    return conn.execute(_RULE, {"uuid": uuid}).first() is not None


def insert(
    conn: sa.Connection,
    rule: dict[str, Any],
    *,
    created_at: datetime.datetime | None = None,
    disabled: bool = False,
) -> dict[str, Any]:
    """Store a validated rule within the caller's transaction (an import
    keeps the source's creation time and disabled flag).

    :raises RuleExists: a rule of that UUID is stored.
    """
    uuid = rule["uuid"]
    if exists(conn, uuid):
        raise RuleExists(uuid=uuid)
    conn.execute(
        sa.insert(_RULES),
        {
            "uuid": uuid,
            "created_at": created_at or models.utcnow(),
            "description": rule["description"],
            "scope": rule["scope"],
            "priority": rule.get("priority", 0),
            "sensitive": rule.get("sensitive", False),
            "language": rule.get("language", 1),
            "disabled": disabled,
        },
    )
    _bump(conn)
    if rule["conditions"]:
        conn.execute(
            sa.insert(_CONDITIONS),
            [
                {
                    "rule_uuid": uuid,
                    "op": c["op"],
                    "field": c["field"],
                    "multiple": c["multiple"],
                    "invert": c["invert"],
                    "params": _params(c, CONDITION_COLUMNS),
                }
                for c in rule["conditions"]
            ],
        )
    if rule["actions"]:
        conn.execute(
            sa.insert(_ACTIONS),
            [
                {
                    "rule_uuid": uuid,
                    "action": a["action"],
                    "params": _params(a, {"action"}),
                }
                for a in rule["actions"]
            ],
        )
    return _with_parts(conn, [conn.execute(_RULE, {"uuid": uuid}).one()])[0]


def get(db: Database, uuid: str) -> dict[str, Any]:
    with db.connect() as conn:
        row = conn.execute(_RULE, {"uuid": uuid}).first()
        if row is None:
            raise RuleNotFound(uuid=uuid)
        return _with_parts(conn, [row])[0]


def list_all(db: Database) -> list[dict[str, Any]]:
    """Every enabled rule in the order they run: higher priority first,
    then oldest first.

    Runs at every processing, mostly finding no rule at all (one statement
    then; three when there are rules).
    """
    with db.connect() as conn:
        return _with_parts(conn, conn.execute(_ENABLED).all())


def _drop(conn: sa.Connection, where: Any) -> int:
    """Delete the rules ``where`` selects, their conditions and actions first
    (whatever the database's foreign keys do); how many rules."""
    uuids = sa.select(_RULES.c.uuid).where(where)
    conn.execute(sa.delete(_CONDITIONS).where(_CONDITIONS.c.rule_uuid.in_(uuids)))
    conn.execute(sa.delete(_ACTIONS).where(_ACTIONS.c.rule_uuid.in_(uuids)))
    dropped = int(conn.execute(sa.delete(_RULES).where(where)).rowcount)
    if dropped:
        _bump(conn)
    return dropped


def delete(db: Database, uuid: str) -> None:
    with db.begin() as conn:
        if not _drop(conn, _RULES.c.uuid == uuid):
            raise RuleNotFound(uuid=uuid)


def delete_all(db: Database) -> int:
    with db.begin() as conn:
        return _drop(conn, sa.true())
