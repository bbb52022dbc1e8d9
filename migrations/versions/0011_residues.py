"""Residues: LiteToken's measure of a version on a text (`tokreg audit --residues`). For each
token BPE's merge loop formed while encoding the text, how often it was emitted (its final
frequency) and how often it was merged further (its intermediate frequency); one run row per
(version, text) with when it was measured.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "residue_runs",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("text_fingerprint", sa.String(length=80), nullable=False),
        sa.Column("computed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("tokreg_version", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_id"], ["versions.id"], name=op.f("fk_residue_runs_version_id_versions"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["text_fingerprint"],
            ["eval_texts.fingerprint"],
            name=op.f("fk_residue_runs_text_fingerprint_eval_texts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("version_id", "text_fingerprint", name=op.f("pk_residue_runs")),
    )
    op.create_table(
        "residue_tokens",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("text_fingerprint", sa.String(length=80), nullable=False),
        sa.Column("token_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("final", sa.BigInteger(), nullable=False),
        sa.Column("intermediate", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_id", "text_fingerprint"],
            ["residue_runs.version_id", "residue_runs.text_fingerprint"],
            name=op.f("fk_residue_tokens_version_id_residue_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("version_id", "text_fingerprint", "token_id", name=op.f("pk_residue_tokens")),
    )


def downgrade() -> None:
    op.drop_table("residue_tokens")
    op.drop_table("residue_runs")
