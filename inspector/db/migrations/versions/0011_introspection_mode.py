"""Out-of-band inspection (API 1.26): an introspection's mode and the BMC's
facts a fallback run keeps for the ramdisk's

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27 14:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("introspections") as batch_op:
        # NULL: in-band, as every introspection recorded before
        batch_op.add_column(sa.Column("mode", sa.String(16), nullable=True))
        batch_op.add_column(sa.Column("bmc_data", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("introspections") as batch_op:
        batch_op.drop_column("bmc_data")
        batch_op.drop_column("mode")
