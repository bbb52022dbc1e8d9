"""Training at corpus scale: several vocabulary sizes from one run are linked by a shared
`training_runs.run_group`, and `training_runs.counting` records how the corpus was counted
(memory limit, pieces dropped by the budget rule and their share of the corpus, sample,
engine, the sizes of the run).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("training_runs") as batch:
        batch.add_column(sa.Column("run_group", sa.String(length=32), nullable=True))
        batch.add_column(sa.Column("counting", sa.JSON(), nullable=True))
        batch.create_index(batch.f("ix_training_runs_run_group"), ["run_group"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("training_runs") as batch:
        batch.drop_index(batch.f("ix_training_runs_run_group"))
        batch.drop_column("counting")
        batch.drop_column("run_group")
