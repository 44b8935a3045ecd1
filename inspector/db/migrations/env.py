"""Alembic environment: runs migrations on the engine handed over in attributes."""

from alembic import context

from inspector.db import models
from inspector.db.migration import VERSION_TABLE

config = context.config
engine = config.attributes["engine"]


def _ours(obj, name, type_, reflected, compare_to):
    """Autogenerate only ever looks at our own tables: a database shared with
    other services keeps theirs untouched."""
    if type_ == "table":
        return name in models.Base.metadata.tables
    return True


with engine.begin() as connection:
    context.configure(
        connection=connection,
        target_metadata=models.Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        version_table=VERSION_TABLE,
        include_object=_ours,
    )
    context.run_migrations()
