"""Hardware history: one row per finished run, and each node's latest

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27 10:50:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

_FACTS = (
    ("cpus", sa.Integer()),
    ("cpu_model", sa.String(255)),
    ("cpu_arch", sa.String(32)),
    ("memory_mb", sa.Integer()),
    ("local_gb", sa.Integer()),
    ("disks", sa.Integer()),
    ("nics", sa.Integer()),
    ("vendor", sa.String(255)),
    ("product", sa.String(255)),
    ("serial", sa.String(255)),
    ("bios_version", sa.String(255)),
)


def upgrade() -> None:
    op.create_table(
        "hardware_runs",
        sa.Column("run", sa.String(36), primary_key=True),
        sa.Column("node_uuid", sa.String(36), nullable=False),
        sa.Column("node_name", sa.String(255), nullable=True),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("record", sa.Text(), nullable=True),
        sa.Column("changes", sa.Text(), nullable=True),
        sa.Column("change_count", sa.Integer(), nullable=False),
        sa.Column("links", sa.Text(), nullable=True),
        *(sa.Column(name, kind, nullable=True) for name, kind in _FACTS),
    )
    op.create_index(
        "hardware_runs_node_idx",
        "hardware_runs",
        ["node_uuid", "finished_at", "run"],
    )
    op.create_index("hardware_runs_finished_idx", "hardware_runs", ["finished_at"])
    with op.batch_alter_table("introspections") as batch_op:
        batch_op.add_column(sa.Column("hardware_run", sa.String(36), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("introspections") as batch_op:
        batch_op.drop_column("hardware_run")
    op.drop_index("hardware_runs_finished_idx", table_name="hardware_runs")
    op.drop_index("hardware_runs_node_idx", table_name="hardware_runs")
    op.drop_table("hardware_runs")
