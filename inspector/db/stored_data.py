"""Raw and processed introspection data kept in the database."""

import json
from typing import Any

import sqlalchemy as sa
from sqlalchemy import orm

from inspector import exceptions
from inspector.db import models
from inspector.db.engine import Database


def put(
    session: orm.Session, uuid: str, data: dict[str, Any], *, processed: bool
) -> None:
    """Keep ``data`` for ``uuid`` within ``session``, replacing older data."""
    text = json.dumps(data, sort_keys=True)
    row = session.get(models.IntrospectionData, (uuid, processed))
    if row is None:
        session.add(
            models.IntrospectionData(
                node_uuid=uuid,
                processed=processed,
                data=text,
                stored_at=models.utcnow(),
            )
        )
    else:
        row.data = text
        row.stored_at = models.utcnow()


def put_core(
    conn: sa.Connection, uuid: str, data: dict[str, Any], *, processed: bool
) -> None:
    """:func:`put` on a Core connection, within its transaction."""
    model = models.IntrospectionData
    text = json.dumps(data, sort_keys=True)
    now = models.utcnow()
    update = (
        sa.update(model)
        .where(model.node_uuid == uuid, model.processed == processed)
        .values(data=text, stored_at=now)
    )
    if conn.execute(update).rowcount:
        return
    conn.execute(
        sa.insert(model).values(
            node_uuid=uuid, processed=processed, data=text, stored_at=now
        )
    )


def store(db: Database, uuid: str, data: dict[str, Any], *, processed: bool) -> None:
    """Keep ``data`` for ``uuid``, replacing what was stored before."""
    with db.session() as session:
        put(session, uuid, data, processed=processed)


def get(db: Database, uuid: str, *, processed: bool) -> dict[str, Any]:
    with db.session() as session:
        row = session.get(models.IntrospectionData, (uuid, processed))
        if row is None:
            kind = "Processed" if processed else "Unprocessed"
            raise exceptions.DataNotFound(
                f"{kind} introspection data for node {uuid} was not found"
            )
        result: dict[str, Any] = json.loads(row.data)
        return result


def delete(db: Database, uuid: str, *, processed: bool | None = None) -> None:
    """Drop stored data of ``uuid`` (both kinds unless ``processed`` is given)."""
    query = sa.delete(models.IntrospectionData).where(
        models.IntrospectionData.node_uuid == uuid
    )
    if processed is not None:
        query = query.where(models.IntrospectionData.processed == processed)
    with db.session() as session:
        session.execute(query)
