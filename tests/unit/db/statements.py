"""Counting what the database is sent, for tests of how many statements a
write or a read costs."""

import sqlalchemy as sa

from inspector.db import engine


def recorded(db: engine.Database) -> list[str]:
    """The first word of every statement ``db`` runs from now on (SELECT,
    INSERT, ...), in order: a list that grows as they run."""
    seen: list[str] = []
    sa.event.listen(
        db.engine,
        "before_cursor_execute",
        lambda _c, _cur, statement, *_a: seen.append(statement.split()[0]),
    )
    return seen
