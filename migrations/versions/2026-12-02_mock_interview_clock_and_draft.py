"""The mock interview's clock and draft live on the server; a review session says so;
a review card keeps its state before the last review for the candidate's own rating.

Revision ID: 5c0a7f3e2b91
Revises: 203df1c8edb7
Create Date: 2026-12-02 05:00:00
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '5c0a7f3e2b91'
down_revision: Union[str, Sequence[str], None] = '203df1c8edb7'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('review_card', schema=None) as batch_op:
        batch_op.add_column(sa.Column('before', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('reviewed_at', sa.DateTime(timezone=True),
                                      nullable=True))
    with op.batch_alter_table('mock_interview', schema=None) as batch_op:
        batch_op.add_column(sa.Column('paused_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('paused_seconds', sa.Double(), server_default='0',
                                      nullable=False))
        batch_op.add_column(sa.Column('extra_seconds', sa.Integer(), server_default='0',
                                      nullable=False))
        batch_op.add_column(sa.Column('draft', sa.String(length=4000), nullable=True))
        batch_op.add_column(sa.Column('purpose', sa.String(length=10), server_default='mock',
                                      nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('review_card', schema=None) as batch_op:
        batch_op.drop_column('reviewed_at')
        batch_op.drop_column('before')
    with op.batch_alter_table('mock_interview', schema=None) as batch_op:
        batch_op.drop_column('purpose')
        batch_op.drop_column('draft')
        batch_op.drop_column('extra_seconds')
        batch_op.drop_column('paused_seconds')
        batch_op.drop_column('paused_at')
