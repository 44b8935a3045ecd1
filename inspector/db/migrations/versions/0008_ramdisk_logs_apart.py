"""A ramdisk's logs kept apart from its data

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27 07:40:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("introspection_data") as batch_op:
        batch_op.add_column(sa.Column("logs", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("introspection_data") as batch_op:
        batch_op.drop_column("logs")
