"""Parity-aware BPE (Foroutan et al., arXiv 2508.04796; `tokreg train --algo parity-bpe`): the
languages of a version's run with their training and (parallel) development costs
(`parity_languages`), and per merge and language the merge's gain in that language and whether
the merge went to it (`parity_merges`). Two views for hand-written SQL: `parity_view` (a
language's costs, bytes per token and its premium on the parallel set) and `parity_merges_view`
(the merges with their texts, language and gain).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

# premium: a language's development tokens over the fewest of any language of the version (1.0
# for the cheapest; the largest is the premium spread of `tokreg eval --parallel`).
_PARITY_VIEW = """
CREATE VIEW parity_view AS
SELECT v.name || '@' || v.number AS tokenizer, p.language AS language,
       p.train_bytes AS train_bytes, p.train_tokens AS train_tokens,
       CAST(p.train_bytes AS FLOAT) / NULLIF(p.train_tokens, 0) AS train_bytes_per_token,
       p.dev_bytes AS dev_bytes, p.dev_tokens AS dev_tokens,
       CAST(p.dev_tokens AS FLOAT) / NULLIF(MIN(p.dev_tokens) OVER (PARTITION BY p.version_id), 0) AS premium
FROM parity_languages p
JOIN versions v ON v.id = p.version_id
"""

_MERGES_VIEW = """
CREATE VIEW parity_merges_view AS
SELECT v.name || '@' || v.number AS tokenizer, pm.rank AS rank, pm.language AS language,
       pm.gain AS gain, pm.chosen AS chosen,
       l.text AS left_text, r.text AS right_text, z.text AS result_text
FROM parity_merges pm
JOIN versions v ON v.id = pm.version_id
JOIN merges m ON m.version_id = pm.version_id AND m.rank = pm.rank
JOIN tokens l ON l.version_id = m.version_id AND l.id = m.left_id
JOIN tokens r ON r.version_id = m.version_id AND r.id = m.right_id
JOIN tokens z ON z.version_id = m.version_id AND z.id = m.result_id
"""


def upgrade() -> None:
    op.create_table(
        "parity_languages",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("language", sa.String(length=64), nullable=False),
        sa.Column("train_bytes", sa.BigInteger(), nullable=False),
        sa.Column("train_tokens", sa.BigInteger(), nullable=False),
        sa.Column("dev_bytes", sa.BigInteger(), nullable=True),
        sa.Column("dev_tokens", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["version_id"], ["versions.id"], name=op.f("fk_parity_languages_version_id_versions"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("version_id", "language", name=op.f("pk_parity_languages")),
    )
    op.create_table(
        "parity_merges",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("language", sa.String(length=64), nullable=False),
        sa.Column("gain", sa.BigInteger(), nullable=False),
        sa.Column("chosen", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_id", "language"],
            ["parity_languages.version_id", "parity_languages.language"],
            name=op.f("fk_parity_merges_version_id_parity_languages"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("version_id", "rank", "language", name=op.f("pk_parity_merges")),
    )
    op.execute(_PARITY_VIEW)
    op.execute(_MERGES_VIEW)


def downgrade() -> None:
    op.execute("DROP VIEW parity_merges_view")
    op.execute("DROP VIEW parity_view")
    op.drop_table("parity_merges")
    op.drop_table("parity_languages")
