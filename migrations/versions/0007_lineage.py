"""Lineage: where each version came from. One row per version: its parent version (NULL for
a version trained or imported from outside), the parent's `name@N` and content hash as they
were when the version was written (kept when the parent is removed), how the version was
derived (trained, imported, reimported, extended, added_tokens) and what the derivation
recorded (tokens added, whether the parent's ids were kept, lines of a check text whose
encoding changed). Existing versions get a row without a parent, derived as their source says.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "lineage",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("parent_id", sa.Integer(), nullable=True),
        sa.Column("parent_ref", sa.String(length=220), nullable=True),
        sa.Column("parent_hash", sa.String(length=80), nullable=True),
        sa.Column("derivation", sa.String(length=32), nullable=False),
        sa.Column("details", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["version_id"], ["versions.id"], name=op.f("fk_lineage_version_id_versions"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["parent_id"], ["versions.id"], name=op.f("fk_lineage_parent_id_versions"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("version_id", name=op.f("pk_lineage")),
    )
    op.create_index(op.f("ix_lineage_parent_id"), "lineage", ["parent_id"])
    op.execute(
        "INSERT INTO lineage (version_id, derivation) "
        "SELECT id, CASE WHEN source = 'train' THEN 'trained' ELSE 'imported' END FROM versions"
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_lineage_parent_id"), table_name="lineage")
    op.drop_table("lineage")
