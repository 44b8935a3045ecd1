"""Following Ironic's own inspections: where a run came from, and the last
inspection of each node Ironic made that the history recorded, and the
follower's last poll

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02 07:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("hardware_runs") as batch_op:
        # every run recorded before was ours
        batch_op.add_column(
            sa.Column(
                "source",
                sa.String(16),
                nullable=False,
                server_default="inspector",
            )
        )
        batch_op.add_column(sa.Column("interface", sa.String(32), nullable=True))
    op.create_table(
        "ironic_inspections",
        sa.Column("node_uuid", sa.String(36), primary_key=True),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("run", sa.String(36), nullable=True),
        sa.Column("recorded_at", sa.DateTime(), nullable=False),
    )
    op.create_index(
        "ironic_inspections_finished_idx",
        "ironic_inspections",
        ["finished_at", "node_uuid"],
    )
    op.create_table(
        "ironic_follow_polls",
        sa.Column("name", sa.String(16), primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("polled_at", sa.DateTime(), nullable=True),
        sa.Column("failed_at", sa.DateTime(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("lag", sa.Float(), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("ironic_follow_polls")
    op.drop_index("ironic_inspections_finished_idx", "ironic_inspections")
    op.drop_table("ironic_inspections")
    with op.batch_alter_table("hardware_runs") as batch_op:
        batch_op.drop_column("interface")
        batch_op.drop_column("source")
