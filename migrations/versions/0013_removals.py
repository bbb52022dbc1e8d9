"""Removals: PickyBPE's removal events (Chizhov et al., arXiv 2409.04599), recorded next to the
merges: the token that left the vocabulary after a given merge, its IoS and count.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "removals",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("event", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("after_rank", sa.Integer(), nullable=False),
        sa.Column("token_id", sa.Integer(), nullable=False),
        sa.Column("ios", sa.Float(), nullable=True),
        sa.Column("count", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["version_id"], ["versions.id"], name=op.f("fk_removals_version_id_versions"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("version_id", "event", name=op.f("pk_removals")),
    )


def downgrade() -> None:
    op.drop_table("removals")
