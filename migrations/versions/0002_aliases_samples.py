"""Aliases and their history, and the sample strings stored per version.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "aliases",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("alias", sa.String(length=100), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_id"], ["versions.id"], name=op.f("fk_aliases_version_id_versions"), ondelete="RESTRICT"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_aliases")),
        sa.UniqueConstraint("name", "alias", name=op.f("uq_aliases_name")),
    )
    op.create_index(op.f("ix_aliases_version_id"), "aliases", ["version_id"])
    op.create_table(
        "alias_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("alias", sa.String(length=100), nullable=False),
        sa.Column("old_version", sa.Integer(), nullable=True),
        sa.Column("new_version", sa.Integer(), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alias_events")),
    )
    op.create_index(op.f("ix_alias_events_name"), "alias_events", ["name"])
    op.create_table(
        "samples",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("ids", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_id"], ["versions.id"], name=op.f("fk_samples_version_id_versions"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("version_id", "position", name=op.f("pk_samples")),
    )


def downgrade() -> None:
    op.drop_table("samples")
    op.drop_index(op.f("ix_alias_events_name"), table_name="alias_events")
    op.drop_table("alias_events")
    op.drop_index(op.f("ix_aliases_version_id"), table_name="aliases")
    op.drop_table("aliases")
