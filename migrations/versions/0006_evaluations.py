"""Evaluations and token audits kept beside the versions they measure: the texts evaluated on
(fingerprinted like corpora), one row per version, text and metric, and one row per audited
token; `evaluations_view` and `audit_view` show them by `name@N`.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "eval_texts",
        sa.Column("fingerprint", sa.String(length=80), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("language", sa.String(length=35), nullable=True),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.Column("characters", sa.BigInteger(), nullable=False),
        sa.Column("words", sa.BigInteger(), nullable=False),
        sa.Column("parts", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("fingerprint", name=op.f("pk_eval_texts")),
    )
    op.create_table(
        "evaluations",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("text_fingerprint", sa.String(length=80), nullable=False),
        sa.Column("metric", sa.String(length=40), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("reference", sa.String(length=80), nullable=True),
        sa.Column("computed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("tokreg_version", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_id"], ["versions.id"], name=op.f("fk_evaluations_version_id_versions"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["text_fingerprint"],
            ["eval_texts.fingerprint"],
            name=op.f("fk_evaluations_text_fingerprint_eval_texts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("version_id", "text_fingerprint", "metric", name=op.f("pk_evaluations")),
    )
    op.create_index(op.f("ix_evaluations_text_fingerprint"), "evaluations", ["text_fingerprint"])
    op.create_table(
        "audits",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("rare_below", sa.Integer(), nullable=False),
        sa.Column("computed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("tokreg_version", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_id"], ["versions.id"], name=op.f("fk_audits_version_id_versions"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("version_id", name=op.f("pk_audits")),
    )
    op.create_table(
        "audit_tokens",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("token_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("category", sa.String(length=24), nullable=False),
        sa.Column("under_trained", sa.String(length=16), nullable=True),
        sa.Column("reencoded", sa.JSON(), nullable=True),
        sa.Column("merge_rank", sa.Integer(), nullable=True),
        sa.Column("merge_count", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["version_id"], ["audits.version_id"], name=op.f("fk_audit_tokens_version_id_audits"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("version_id", "token_id", name=op.f("pk_audit_tokens")),
    )
    # Views for hand-written SQL: results by `name@N`, the text's name and language, and the
    # reference text of a premium; audited tokens with their text, kind and training count.
    op.execute(
        """
        CREATE VIEW evaluations_view AS
        SELECT v.name || '@' || v.number AS tokenizer, v.name AS name, v.number AS version,
               v.vocab_size AS vocab_size, t.name AS text, t.language AS language,
               e.metric AS metric, e.value AS value,
               r.name AS reference_text, r.language AS reference_language,
               e.computed_at AS computed_at, e.text_fingerprint AS text_fingerprint
        FROM evaluations e
        JOIN versions v ON v.id = e.version_id
        JOIN eval_texts t ON t.fingerprint = e.text_fingerprint
        LEFT JOIN eval_texts r ON r.fingerprint = e.reference
        """
    )
    op.execute(
        """
        CREATE VIEW audit_view AS
        SELECT v.name || '@' || v.number AS tokenizer, a.token_id AS id, t.text AS text, t.bytes AS bytes,
               t.kind AS kind, a.category AS category, a.under_trained AS under_trained,
               a.reencoded AS reencoded, t.count AS count, a.merge_rank AS merge_rank,
               a.merge_count AS merge_count
        FROM audit_tokens a
        JOIN versions v ON v.id = a.version_id
        JOIN tokens t ON t.version_id = a.version_id AND t.id = a.token_id
        """
    )


def downgrade() -> None:
    op.execute("DROP VIEW audit_view")
    op.execute("DROP VIEW evaluations_view")
    op.drop_table("audit_tokens")
    op.drop_table("audits")
    op.drop_index(op.f("ix_evaluations_text_fingerprint"), table_name="evaluations")
    op.drop_table("evaluations")
    op.drop_table("eval_texts")
