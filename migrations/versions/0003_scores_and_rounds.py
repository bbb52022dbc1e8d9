"""What WordPiece and Unigram record beyond BPE: the counts behind each merge's score, and each
EM / prune round of a Unigram run. merges_view gains the two counts. And `version_numbers`,
the highest number each name has used, so a removed version's number is never given again.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_VIEW = """
CREATE VIEW merges_view AS
SELECT v.name || '@' || v.number AS tokenizer, m.rank AS rank,
       l.text AS left_text, r.text AS right_text, z.text AS result_text,
       m.left_id AS left_id, m.right_id AS right_id, m.result_id AS result_id,
       m.count AS count, m.score AS score{extra}
FROM merges m
JOIN versions v ON v.id = m.version_id
JOIN tokens l ON l.version_id = m.version_id AND l.id = m.left_id
JOIN tokens r ON r.version_id = m.version_id AND r.id = m.right_id
JOIN tokens z ON z.version_id = m.version_id AND z.id = m.result_id
"""


def upgrade() -> None:
    op.execute("DROP VIEW merges_view")
    op.add_column("merges", sa.Column("left_count", sa.BigInteger(), nullable=True))
    op.add_column("merges", sa.Column("right_count", sa.BigInteger(), nullable=True))
    op.execute(_VIEW.format(extra=",\n       m.left_count AS left_count, m.right_count AS right_count"))
    op.create_table(
        "training_rounds",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("phase", sa.String(length=16), nullable=False),
        sa.Column("vocab_size", sa.Integer(), nullable=False),
        sa.Column("log_likelihood", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["versions.id"],
            name=op.f("fk_training_rounds_version_id_versions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("version_id", "round", name=op.f("pk_training_rounds")),
    )
    op.create_table(
        "version_numbers",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("last_number", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_version_numbers")),
    )
    op.execute("INSERT INTO version_numbers (name, last_number) SELECT name, max(number) FROM versions GROUP BY name")


def downgrade() -> None:
    op.drop_table("version_numbers")
    op.drop_table("training_rounds")
    op.execute("DROP VIEW merges_view")
    with op.batch_alter_table("merges") as batch:
        batch.drop_column("right_count")
        batch.drop_column("left_count")
    op.execute(_VIEW.format(extra=""))
