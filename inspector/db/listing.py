"""Listing introspections a page at a time (``GET /v1/introspection``, the
reconcile's walk), each page read through an index in its order."""

from typing import Any, cast

import sqlalchemy as sa

from inspector import exceptions
from inspector.db import models
from inspector.db.engine import Database
from inspector.db.introspections import IntrospectionRecord, record_of

_TABLE = cast(sa.Table, models.Introspection.__table__)
_MARK = sa.select(_TABLE.c.started_at, _TABLE.c.uuid).where(
    _TABLE.c.uuid == sa.bindparam("uuid")
)


def page(
    db: Database,
    *,
    limit: int,
    marker: str | None = None,
    states_filter: list[str] | None = None,
) -> list[IntrospectionRecord]:
    """Newest first; ``marker`` is the UUID of the last item of the previous page.

    Each page is read through an index in its order, so its cost does not
    grow with the number of records: without a filter through
    (started_at, uuid); with one, through (state, started_at, uuid), one
    page per state merged (a plain ``state IN (...)`` would sort every
    matching row, or walk every other one).
    """
    table = _TABLE
    order = (table.c.started_at.desc(), table.c.uuid.desc())
    with db.connect() as conn:
        after = None
        if marker is not None:
            mark = conn.execute(_MARK, {"uuid": marker}).first()
            if mark is None:
                raise exceptions.NotFound(
                    f"Marker {marker} does not match any introspection"
                )
            after = sa.or_(
                table.c.started_at < mark.started_at,
                sa.and_(
                    table.c.started_at == mark.started_at, table.c.uuid < mark.uuid
                ),
            )

        def one(state: str | None) -> sa.Select[Any]:
            query = sa.select(table)
            if state is not None:
                query = query.where(table.c.state == state)
            if after is not None:
                query = query.where(after)
            return query.order_by(*order).limit(limit)

        wanted = sorted(set(states_filter or ()))
        if len(wanted) <= 1:
            query = one(wanted[0] if wanted else None)
        else:
            merged = sa.union_all(*(one(s).subquery().select() for s in wanted))
            rows = merged.subquery()
            query = (
                sa.select(rows)
                .order_by(rows.c.started_at.desc(), rows.c.uuid.desc())
                .limit(limit)
            )
        return [record_of(row) for row in conn.execute(query)]
