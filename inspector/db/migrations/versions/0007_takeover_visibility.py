"""Takeover: the conductor an unclaimed step was cast to, and when the
current owner claimed its step

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-27 04:20:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("introspections") as batch_op:
        batch_op.add_column(sa.Column("handed_to", sa.String(255), nullable=True))
        batch_op.add_column(sa.Column("claimed_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("introspections") as batch_op:
        batch_op.drop_column("claimed_at")
        batch_op.drop_column("handed_to")
