"""PXE filter status, one row per filter (agent or standalone process)

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24 07:05:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pxe_filters",
        sa.Column("host", sa.String(255), primary_key=True),
        sa.Column("driver", sa.String(32), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(), nullable=False),
        sa.Column("sync_requested_at", sa.DateTime(), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("pxe_filters")
