"""Fleet scale: a listing index by state and start time; power-on bursts;
the ports read at start kept for the processing; owed writes found by index

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 22:45:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("introspections") as batch_op:
        batch_op.create_index(
            "introspections_state_started_at_idx",
            ["state", "started_at", "uuid"],
            unique=False,
        )
        batch_op.drop_index("introspections_state_idx")
        batch_op.add_column(sa.Column("ports", sa.Text(), nullable=True))
        batch_op.create_index(
            "introspections_owing_idx",
            ["uuid"],
            unique=False,
            sqlite_where=sa.text("owed_writes IS NOT NULL"),
            postgresql_where=sa.text("owed_writes IS NOT NULL"),
        )
    with op.batch_alter_table("leases") as batch_op:
        batch_op.add_column(
            sa.Column("used", sa.Integer(), nullable=False, server_default="1")
        )


def downgrade() -> None:
    with op.batch_alter_table("leases") as batch_op:
        batch_op.drop_column("used")
    with op.batch_alter_table("introspections") as batch_op:
        batch_op.drop_index("introspections_owing_idx")
        batch_op.drop_column("ports")
        batch_op.create_index("introspections_state_idx", ["state"], unique=False)
        batch_op.drop_index("introspections_state_started_at_idx")
