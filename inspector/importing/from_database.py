"""Reading ironic-inspector 12.x's database (any URL SQLAlchemy takes:
its MariaDB, PostgreSQL or SQLite), read only, one connection. The
tables are 12.x's: ``nodes``, ``attributes``, ``options``, ``rules``,
``rule_conditions``, ``rule_actions``, ``introspection_data``."""

import datetime
import json
from typing import Any

import sqlalchemy as sa

from inspector import exceptions
from inspector.importing.source import Upstream, UpstreamNode

TABLES = (
    "nodes",
    "attributes",
    "options",
    "rules",
    "rule_conditions",
    "rule_actions",
    "introspection_data",
)


def _json(value: Any, where: str) -> Any:
    if value is None or isinstance(value, dict | list):
        return value
    try:
        return json.loads(value)
    except (TypeError, ValueError) as exc:
        raise exceptions.InvalidInput(f"{where}: not JSON ({exc})") from None


def _time(value: Any) -> datetime.datetime | None:
    if value is None or isinstance(value, datetime.datetime):
        return value
    return datetime.datetime.fromisoformat(str(value))


def _password_hidden(url: str) -> str:
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return "the URL given"


def read(url: str) -> Upstream:
    """Everything 12.x's database at ``url`` holds.

    :raises InvalidInput: the URL cannot be opened, or it is not a 12.x
        database (a table missing, a value that is not JSON).
    """
    shown = _password_hidden(url)
    try:
        engine = sa.create_engine(url)
    except (sa.exc.ArgumentError, ImportError) as exc:
        raise exceptions.InvalidInput(f"--connection {shown}: {exc}") from None
    try:
        with engine.connect() as conn:
            missing = [t for t in TABLES if not sa.inspect(conn).has_table(t)]
            if missing:
                raise exceptions.InvalidInput(
                    f"{shown} is not ironic-inspector 12.x's database: no table "
                    + ", ".join(missing)
                )
            return _read(conn, shown)
    except sa.exc.OperationalError as exc:
        raise exceptions.InvalidInput(
            f"ironic-inspector's database at {shown} cannot be read: {exc.orig}"
        ) from None
    finally:
        engine.dispose()


def _read(conn: sa.Connection, where: str) -> Upstream:
    found = Upstream(where=where)
    nodes: dict[str, UpstreamNode] = {}
    rows = conn.execute(
        sa.text(
            "SELECT uuid, state, started_at, finished_at, error, manage_boot "
            "FROM nodes ORDER BY uuid"
        )
    )
    for row in rows:
        nodes[row.uuid] = UpstreamNode(
            uuid=row.uuid,
            state=row.state,
            started_at=_time(row.started_at),
            finished_at=_time(row.finished_at),
            error=row.error,
            manage_boot=True if row.manage_boot is None else bool(row.manage_boot),
        )
    attributes = conn.execute(
        sa.text("SELECT node_uuid, name, value FROM attributes ORDER BY name, value")
    )
    for row in attributes:
        if row.node_uuid in nodes and row.value is not None:
            nodes[row.node_uuid].attributes.append((row.name, row.value))
    for row in conn.execute(sa.text("SELECT uuid, name, value FROM options")):
        if row.uuid in nodes:
            where_ = f"option {row.name} of node {row.uuid}"
            nodes[row.uuid].options[row.name] = _json(row.value, where_)
    stored = conn.execute(
        sa.text("SELECT uuid, processed, data FROM introspection_data")
    )
    for row in stored:
        node = nodes.get(row.uuid)
        if node is None:
            continue
        data = _json(row.data, f"stored data of node {row.uuid}")
        if bool(row.processed):
            node.processed = data
        else:
            node.unprocessed = data
    found.nodes = list(nodes.values())
    found.rules = _rules(conn)
    return found


def _rules(conn: sa.Connection) -> list[dict[str, Any]]:
    rules: dict[str, dict[str, Any]] = {}
    query = sa.text(
        "SELECT uuid, created_at, description, disabled, scope FROM rules "
        "ORDER BY created_at, uuid"
    )
    for row in conn.execute(query):
        rules[row.uuid] = {
            "uuid": row.uuid,
            "created_at": _time(row.created_at),
            "description": row.description,
            "disabled": bool(row.disabled),
            "scope": row.scope,
            "conditions": [],
            "actions": [],
        }
    conditions = conn.execute(
        sa.text(
            "SELECT rule, op, multiple, invert, field, params FROM rule_conditions "
            "ORDER BY id"
        )
    )
    for row in conditions:
        if row.rule in rules:
            params = _json(row.params, f"a condition of rule {row.rule}") or {}
            rules[row.rule]["conditions"].append(
                {
                    "op": row.op,
                    "field": row.field,
                    "multiple": row.multiple,
                    "invert": bool(row.invert),
                    **params,
                }
            )
    actions = conn.execute(
        sa.text("SELECT rule, action, params FROM rule_actions ORDER BY id")
    )
    for row in actions:
        if row.rule in rules:
            params = _json(row.params, f"an action of rule {row.rule}") or {}
            rules[row.rule]["actions"].append({"action": row.action, **params})
    return list(rules.values())
