"""writes to Ironic still owed by finished introspections

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 04:10:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("introspections", schema=None) as batch_op:
        batch_op.add_column(sa.Column("owed_writes", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("owed_reason", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("introspections", schema=None) as batch_op:
        batch_op.drop_column("owed_reason")
        batch_op.drop_column("owed_writes")
