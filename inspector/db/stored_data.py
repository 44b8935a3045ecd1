"""Raw and processed introspection data kept in the database."""

import json
from typing import Any

import sqlalchemy as sa

from inspector import exceptions
from inspector.db import models
from inspector.db.engine import Database


def put(
    conn: sa.Connection, uuid: str, data: dict[str, Any], *, processed: bool
) -> None:
    """Keep ``data`` for ``uuid`` within the transaction of ``conn``,
    replacing older data (an update, then an insert if there was none)."""
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
    with db.connect() as conn:
        put(conn, uuid, data, processed=processed)
        conn.commit()


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
