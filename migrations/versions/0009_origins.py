"""Origins: where a version copied from another registry (`tokreg copy`) came from. One row per
copied version: the source registry (password hidden), the version's `name@N` and content hash
there, and when it was copied. A version whose `name@N` was taken in the destination gets the
next number; its origin still names the number it had.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "origins",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("registry", sa.Text(), nullable=False),
        sa.Column("ref", sa.String(length=220), nullable=False),
        sa.Column("content_hash", sa.String(length=80), nullable=False),
        sa.Column("copied_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_id"], ["versions.id"], name=op.f("fk_origins_version_id_versions"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("version_id", name=op.f("pk_origins")),
    )


def downgrade() -> None:
    op.drop_table("origins")
