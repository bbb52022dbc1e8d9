"""Each version's canonical content stored once (`version_contents`), so that loading a version
on a machine that has never loaded it reads one value and checks its hash, instead of reading
and re-serializing every token and merge row.

Existing versions are backfilled here, in the same transaction as the new table: each one's
rows are serialized (format tokreg-content-v1, which never changes: the hashes depend on it) and
stored only when they hash to the version's recorded hash, so every hash is kept. A version
whose rows were changed behind tokreg's back gets no stored content; loading it then reads the
rows and refuses them, naming both hashes, and `tokreg verify` reports it.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from tokreg.content import content_hash, serialize

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_versions = sa.table(
    "versions",
    sa.column("id", sa.Integer),
    sa.column("algorithm", sa.String),
    sa.column("config", sa.JSON),
    sa.column("content_hash", sa.String),
)
_tokens = sa.table(
    "tokens",
    sa.column("version_id", sa.Integer),
    sa.column("id", sa.Integer),
    sa.column("kind", sa.String),
    sa.column("bytes", sa.LargeBinary),
    sa.column("score", sa.Float),
)
_merges = sa.table(
    "merges",
    sa.column("version_id", sa.Integer),
    sa.column("rank", sa.Integer),
    sa.column("left_id", sa.Integer),
    sa.column("right_id", sa.Integer),
    sa.column("result_id", sa.Integer),
)
_contents = sa.table("version_contents", sa.column("version_id", sa.Integer), sa.column("content", sa.LargeBinary))


def upgrade() -> None:
    op.create_table(
        "version_contents",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_id"], ["versions.id"], name=op.f("fk_version_contents_version_id_versions"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("version_id", name=op.f("pk_version_contents")),
    )
    conn = op.get_bind()
    versions = conn.execute(sa.select(_versions).order_by(_versions.c.id)).all()
    for v in versions:
        tokens = conn.execute(
            sa.select(_tokens.c.id, _tokens.c.kind, _tokens.c.bytes, _tokens.c.score)
            .where(_tokens.c.version_id == v.id)
            .order_by(_tokens.c.id)
        )
        merges = conn.execute(
            sa.select(_merges.c.left_id, _merges.c.right_id, _merges.c.result_id)
            .where(_merges.c.version_id == v.id)
            .order_by(_merges.c.rank)
        ).all()
        raw = serialize(
            v.algorithm,
            v.config,
            ((t.id, t.kind, bytes(t.bytes), t.score) for t in tokens),
            [tuple(m) for m in merges],
        )
        if content_hash(raw) == v.content_hash:
            conn.execute(sa.insert(_contents).values(version_id=v.id, content=raw))


def downgrade() -> None:
    op.drop_table("version_contents")
