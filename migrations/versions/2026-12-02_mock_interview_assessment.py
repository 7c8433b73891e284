"""An open answer's self-check (the answer and its ticks) survives a reload.

Revision ID: 8e1d4b6a0c27
Revises: 5c0a7f3e2b91
Create Date: 2026-12-02 07:00:00
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '8e1d4b6a0c27'
down_revision: Union[str, Sequence[str], None] = '5c0a7f3e2b91'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('mock_interview', schema=None) as batch_op:
        batch_op.add_column(sa.Column('assessment', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('mock_interview', schema=None) as batch_op:
        batch_op.drop_column('assessment')
