"""Introspection rules of API 1.24: priority, sensitive, the rule set's version

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27 11:15:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("rules") as batch_op:
        batch_op.add_column(
            sa.Column("priority", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.add_column(
            sa.Column(
                "sensitive", sa.Boolean(), nullable=False, server_default=sa.false()
            )
        )
        # the rules stored before are of the v1 language
        batch_op.add_column(
            sa.Column("language", sa.Integer(), nullable=False, server_default="1")
        )
    versions = op.create_table(
        "rule_set_version",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
    )
    op.bulk_insert(versions, [{"id": 1, "version": 1}])


def downgrade() -> None:
    op.drop_table("rule_set_version")
    with op.batch_alter_table("rules") as batch_op:
        batch_op.drop_column("language")
        batch_op.drop_column("sensitive")
        batch_op.drop_column("priority")
