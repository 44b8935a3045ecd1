"""ownership of running steps, leases

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 23:30:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("introspections", schema=None) as batch_op:
        batch_op.add_column(sa.Column("owner", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("owner_run", sa.String(length=36), nullable=True))
        batch_op.add_column(sa.Column("deadline", sa.DateTime(), nullable=True))
    op.create_table(
        "leases",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("holder", sa.String(length=255), nullable=True),
        sa.Column("epoch", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )


def downgrade() -> None:
    op.drop_table("leases")
    with op.batch_alter_table("introspections", schema=None) as batch_op:
        batch_op.drop_column("deadline")
        batch_op.drop_column("owner_run")
        batch_op.drop_column("owner")
