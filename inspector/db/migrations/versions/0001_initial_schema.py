"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-22 14:49:17.214879
"""

from alembic import op
import sqlalchemy as sa


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('introspections',
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('started_at', sa.DateTime(), nullable=False),
    sa.Column('finished_at', sa.DateTime(), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('manage_boot', sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint('uuid')
    )
    with op.batch_alter_table('introspections', schema=None) as batch_op:
        batch_op.create_index('introspections_started_at_idx', ['started_at', 'uuid'], unique=False)
        batch_op.create_index('introspections_state_idx', ['state'], unique=False)

    op.create_table('rules',
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('disabled', sa.Boolean(), nullable=False),
    sa.Column('scope', sa.String(length=255), nullable=True),
    sa.PrimaryKeyConstraint('uuid')
    )
    op.create_table('attributes',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('node_uuid', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('value', sa.String(length=255), nullable=False),
    sa.ForeignKeyConstraint(['node_uuid'], ['introspections.uuid'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('attributes', schema=None) as batch_op:
        batch_op.create_index('attributes_name_value_idx', ['name', 'value'], unique=False)
        batch_op.create_index('attributes_node_uuid_idx', ['node_uuid'], unique=False)

    op.create_table('introspection_data',
    sa.Column('node_uuid', sa.String(length=36), nullable=False),
    sa.Column('processed', sa.Boolean(), nullable=False),
    sa.Column('data', sa.Text(), nullable=False),
    sa.Column('stored_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['node_uuid'], ['introspections.uuid'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('node_uuid', 'processed')
    )
    op.create_table('rule_actions',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('rule_uuid', sa.String(length=36), nullable=False),
    sa.Column('action', sa.String(length=255), nullable=False),
    sa.Column('params', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['rule_uuid'], ['rules.uuid'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('rule_conditions',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('rule_uuid', sa.String(length=36), nullable=False),
    sa.Column('op', sa.String(length=255), nullable=False),
    sa.Column('multiple', sa.String(length=255), nullable=False),
    sa.Column('invert', sa.Boolean(), nullable=False),
    sa.Column('field', sa.Text(), nullable=False),
    sa.Column('params', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['rule_uuid'], ['rules.uuid'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
