"""Raw and processed introspection data kept in the database.

A ramdisk's post is stored once, as the API received it less its ``logs``:
those are kept apart in the same row (``logs``) until the conductor that
processes the post takes them (:func:`drop_logs`), so the data itself is
never written again to remove them.
"""

import dataclasses
import json
from typing import Any, cast

import sqlalchemy as sa

from inspector import exceptions
from inspector.db import models
from inspector.db.engine import Database

_TABLE = cast(sa.Table, models.IntrospectionData.__table__)
_WHICH = sa.and_(
    _TABLE.c.node_uuid == sa.bindparam("w_uuid"),
    _TABLE.c.processed == sa.bindparam("w_processed"),
)
# built once: a statement rebuilt per call spends more CPU on SQLAlchemy's
# cache key than on the database
_REPLACE = (
    sa.update(_TABLE)
    .where(_WHICH)
    .values(
        data=sa.bindparam("v_data"),
        logs=sa.bindparam("v_logs"),
        stored_at=sa.bindparam("v_stored_at"),
    )
)
_ADD = sa.insert(_TABLE)
_READ = sa.select(_TABLE.c.data).where(_WHICH)
_RECORDS = cast(sa.Table, models.Introspection.__table__)
_READ_POST = (
    sa.select(_RECORDS.c.version, _TABLE.c.data, _TABLE.c.logs)
    .select_from(
        _RECORDS.outerjoin(
            _TABLE,
            sa.and_(
                _TABLE.c.node_uuid == _RECORDS.c.uuid,
                _TABLE.c.processed == sa.false(),
            ),
        )
    )
    .where(_RECORDS.c.uuid == sa.bindparam("w_uuid"))
)
_DROP_LOGS = (
    sa.update(_TABLE)
    .where(
        _TABLE.c.node_uuid == sa.bindparam("w_uuid"),
        _TABLE.c.processed == sa.false(),
    )
    .values(logs=None)
)


@dataclasses.dataclass
class Post:
    """A ramdisk's post as stored: its data, and its logs kept apart."""

    data: dict[str, Any]
    logs: str | None = None
    """The ``logs`` field as posted (base64 of a gzipped tarball), or None."""


def _upsert(dialect: str) -> Any:
    """One INSERT ... ON CONFLICT DO UPDATE, where the dialect has it."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    elif dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert  # type: ignore[assignment]
    else:
        return None
    statement = insert(_TABLE)
    return statement.on_conflict_do_update(
        index_elements=[_TABLE.c.node_uuid, _TABLE.c.processed],
        set_={
            "data": statement.excluded.data,
            "logs": statement.excluded.logs,
            "stored_at": statement.excluded.stored_at,
        },
    )


_UPSERTS = {name: _upsert(name) for name in ("postgresql", "sqlite")}


def put(
    conn: sa.Connection,
    uuid: str,
    data: dict[str, Any],
    *,
    processed: bool,
    logs: str | None = None,
) -> None:
    """Keep ``data`` (and a post's ``logs``, apart) for ``uuid`` within the
    transaction of ``conn``, replacing older data: one upsert on PostgreSQL
    and SQLite, else an update, then an insert if there was nothing to
    update."""
    row = {
        "node_uuid": uuid,
        "processed": processed,
        "data": json.dumps(data, sort_keys=True),
        "logs": logs,
        "stored_at": models.utcnow(),
    }
    upsert = _UPSERTS.get(conn.dialect.name)
    if upsert is not None:
        conn.execute(upsert, row)
        return
    replaced = conn.execute(
        _REPLACE,
        {
            "w_uuid": uuid,
            "w_processed": processed,
            "v_data": row["data"],
            "v_logs": logs,
            "v_stored_at": row["stored_at"],
        },
    )
    if not replaced.rowcount:
        conn.execute(_ADD, row)


def store(db: Database, uuid: str, data: dict[str, Any], *, processed: bool) -> None:
    """Keep ``data`` for ``uuid``, replacing what was stored before."""
    with db.connect() as conn:
        put(conn, uuid, data, processed=processed)
        conn.commit()


def _not_found(uuid: str, processed: bool) -> exceptions.DataNotFound:
    kind = "Processed" if processed else "Unprocessed"
    return exceptions.DataNotFound(
        f"{kind} introspection data for node {uuid} was not found"
    )


def get(db: Database, uuid: str, *, processed: bool) -> dict[str, Any]:
    with db.connect() as conn:
        text = conn.execute(
            _READ, {"w_uuid": uuid, "w_processed": processed}
        ).scalar_one_or_none()
    if text is None:
        raise _not_found(uuid, processed)
    result: dict[str, Any] = json.loads(text)
    return result


def get_post(db: Database, uuid: str, version: int) -> Post:
    """The ramdisk's post stored for ``uuid`` (its data, parsed once, and
    its logs), if the introspection is still at ``version``: a read and a
    fence in one statement.

    :raises StaleState: the introspection moved on (or is gone).
    :raises DataNotFound: it is current, but no post is stored.
    """
    with db.connect() as conn:
        row = conn.execute(_READ_POST, {"w_uuid": uuid}).first()
    if row is None or row.version != version:
        raise exceptions.StaleState(node=uuid, version=version)
    if row.data is None:
        raise _not_found(uuid, False)
    return Post(json.loads(row.data), row.logs)


def drop_logs(db: Database, uuid: str) -> None:
    """Forget the logs kept with the post of ``uuid`` (the data stays as
    it is): a redelivered or taken-over step finds them gone."""
    with db.connect() as conn:
        conn.execute(_DROP_LOGS, {"w_uuid": uuid})
        conn.commit()


def delete(db: Database, uuid: str, *, processed: bool | None = None) -> None:
    """Drop stored data of ``uuid`` (both kinds unless ``processed`` is given)."""
    query = sa.delete(models.IntrospectionData).where(
        models.IntrospectionData.node_uuid == uuid
    )
    if processed is not None:
        query = query.where(models.IntrospectionData.processed == processed)
    with db.begin() as conn:
        conn.execute(query)
