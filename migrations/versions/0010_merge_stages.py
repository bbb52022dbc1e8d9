"""Merge stages: superword BPE (SuperBPE, arXiv 2503.13423) learns its merges in two stages,
within the pieces of the pre-tokenizer pattern (1) and then across them (2). `merges.stage`
records which; NULL for every other algorithm; merges_view shows it. The transition point t is the version's config
("transition"), also the result of the first stage-2 merge that made a new token.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


_VIEW = """
CREATE VIEW merges_view AS
SELECT v.name || '@' || v.number AS tokenizer, m.rank AS rank,
       l.text AS left_text, r.text AS right_text, z.text AS result_text,
       m.left_id AS left_id, m.right_id AS right_id, m.result_id AS result_id,
       m.count AS count, m.score AS score,
       m.left_count AS left_count, m.right_count AS right_count{extra}
FROM merges m
JOIN versions v ON v.id = m.version_id
JOIN tokens l ON l.version_id = m.version_id AND l.id = m.left_id
JOIN tokens r ON r.version_id = m.version_id AND r.id = m.right_id
JOIN tokens z ON z.version_id = m.version_id AND z.id = m.result_id
"""


def upgrade() -> None:
    op.execute("DROP VIEW merges_view")
    op.add_column("merges", sa.Column("stage", sa.SmallInteger(), nullable=True))
    op.execute(_VIEW.format(extra=",\n       m.stage AS stage"))


def downgrade() -> None:
    op.execute("DROP VIEW merges_view")
    op.drop_column("merges", "stage")
    op.execute(_VIEW.format(extra=""))
