"""The registry: versions, tokens, merges, training runs, and the vocab / merges_view views.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("algorithm", sa.String(length=32), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("vocab_size", sa.Integer(), nullable=False),
        sa.Column("content_hash", sa.String(length=80), nullable=False),
        sa.Column("sha256", sa.String(length=80), nullable=False),
        sa.Column("source", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("message", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_versions")),
        sa.UniqueConstraint("name", "number", name=op.f("uq_versions_name")),
    )
    op.create_index(op.f("ix_versions_name"), "versions", ["name"])
    op.create_index(op.f("ix_versions_content_hash"), "versions", ["content_hash"])
    op.create_table(
        "tokens",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("bytes", sa.LargeBinary(), nullable=False),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=True),
        sa.Column("score", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["version_id"], ["versions.id"], name=op.f("fk_tokens_version_id_versions"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("version_id", "id", name=op.f("pk_tokens")),
    )
    op.create_table(
        "merges",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("left_id", sa.Integer(), nullable=False),
        sa.Column("right_id", sa.Integer(), nullable=False),
        sa.Column("result_id", sa.Integer(), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=True),
        sa.Column("score", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["version_id"], ["versions.id"], name=op.f("fk_merges_version_id_versions"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("version_id", "rank", name=op.f("pk_merges")),
    )
    op.create_table(
        "training_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("corpus_fingerprint", sa.String(length=80), nullable=False),
        sa.Column("corpus_files", sa.JSON(), nullable=False),
        sa.Column("corpus_bytes", sa.BigInteger(), nullable=False),
        sa.Column("tokreg_version", sa.String(length=32), nullable=False),
        sa.Column("threads", sa.Integer(), nullable=False),
        sa.Column("count_seconds", sa.Float(), nullable=False),
        sa.Column("train_seconds", sa.Float(), nullable=False),
        sa.Column("total_seconds", sa.Float(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["versions.id"],
            name=op.f("fk_training_runs_version_id_versions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_training_runs")),
        sa.UniqueConstraint("version_id", name=op.f("uq_training_runs_version_id")),
    )
    # Views for hand-written SQL; `tokenizer` is the readable ref name@N.
    op.execute(
        """
        CREATE VIEW vocab AS
        SELECT v.name || '@' || v.number AS tokenizer, t.id AS id, t.text AS text, t.bytes AS bytes,
               t.kind AS kind, t.count AS count, t.score AS score
        FROM tokens t JOIN versions v ON v.id = t.version_id
        """
    )
    op.execute(
        """
        CREATE VIEW merges_view AS
        SELECT v.name || '@' || v.number AS tokenizer, m.rank AS rank,
               l.text AS left_text, r.text AS right_text, z.text AS result_text,
               m.left_id AS left_id, m.right_id AS right_id, m.result_id AS result_id,
               m.count AS count, m.score AS score
        FROM merges m
        JOIN versions v ON v.id = m.version_id
        JOIN tokens l ON l.version_id = m.version_id AND l.id = m.left_id
        JOIN tokens r ON r.version_id = m.version_id AND r.id = m.right_id
        JOIN tokens z ON z.version_id = m.version_id AND z.id = m.result_id
        """
    )


def downgrade() -> None:
    op.execute("DROP VIEW merges_view")
    op.execute("DROP VIEW vocab")
    op.drop_table("training_runs")
    op.drop_table("merges")
    op.drop_table("tokens")
    op.drop_index(op.f("ix_versions_content_hash"), table_name="versions")
    op.drop_index(op.f("ix_versions_name"), table_name="versions")
    op.drop_table("versions")
