"""Token datasets: the datasets `tokreg tokenize` wrote and their shards, with the tokenizer
that made them (its ref and content hash kept when the version is removed), and two views:
`datasets_view` (one row per dataset) and `shards` (one row per shard, with the tokenizer's
hash: "which data did this tokenizer make", and the reverse).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "datasets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dataset_hash", sa.String(length=80), nullable=False),
        sa.Column("folder", sa.Text(), nullable=False),
        sa.Column("tokenizer_ref", sa.String(length=220), nullable=False),
        sa.Column("tokenizer_hash", sa.String(length=80), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=True),
        sa.Column("format", sa.String(length=16), nullable=False),
        sa.Column("dtype", sa.String(length=16), nullable=False),
        sa.Column("shards", sa.Integer(), nullable=False),
        sa.Column("tokens", sa.BigInteger(), nullable=False),
        sa.Column("documents", sa.BigInteger(), nullable=False),
        sa.Column("skipped", sa.BigInteger(), nullable=False),
        sa.Column("shard_of", sa.String(length=32), nullable=True),
        sa.Column("manifest", sa.JSON(), nullable=False),
        sa.Column("tokreg_version", sa.String(length=32), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_id"], ["versions.id"], name=op.f("fk_datasets_version_id_versions"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_datasets")),
        sa.UniqueConstraint("dataset_hash", "folder", name=op.f("uq_datasets_dataset_hash")),
    )
    op.create_index(op.f("ix_datasets_dataset_hash"), "datasets", ["dataset_hash"])
    op.create_index(op.f("ix_datasets_tokenizer_hash"), "datasets", ["tokenizer_hash"])
    op.create_index(op.f("ix_datasets_version_id"), "datasets", ["version_id"])
    op.create_table(
        "dataset_shards",
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("tokens", sa.BigInteger(), nullable=False),
        sa.Column("documents", sa.BigInteger(), nullable=False),
        sa.Column("skipped", sa.BigInteger(), nullable=False),
        sa.Column("data_xxh3", sa.String(length=80), nullable=False),
        sa.Column("files", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["dataset_id"], ["datasets.id"], name=op.f("fk_dataset_shards_dataset_id_datasets"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("dataset_id", "position", name=op.f("pk_dataset_shards")),
    )
    op.execute(
        """
        CREATE VIEW datasets_view AS
        SELECT d.dataset_hash AS dataset_hash, d.folder AS folder, d.tokenizer_ref AS tokenizer,
               d.tokenizer_hash AS tokenizer_hash, v.name || '@' || v.number AS version,
               d.format AS format, d.dtype AS dtype, d.shards AS shards, d.tokens AS tokens,
               d.documents AS documents, d.skipped AS skipped, d.shard_of AS shard_of,
               d.recorded_at AS recorded_at
        FROM datasets d
        LEFT JOIN versions v ON v.id = d.version_id
        """
    )
    op.execute(
        """
        CREATE VIEW shards AS
        SELECT d.dataset_hash AS dataset_hash, d.folder AS folder, d.tokenizer_ref AS tokenizer,
               d.tokenizer_hash AS tokenizer_hash, s.position AS position, s.name AS shard,
               s.tokens AS tokens, s.documents AS documents, s.skipped AS skipped,
               s.data_xxh3 AS data_xxh3, d.format AS format, d.dtype AS dtype
        FROM dataset_shards s
        JOIN datasets d ON d.id = s.dataset_id
        """
    )


def downgrade() -> None:
    op.execute("DROP VIEW shards")
    op.execute("DROP VIEW datasets_view")
    op.drop_table("dataset_shards")
    op.drop_index(op.f("ix_datasets_version_id"), table_name="datasets")
    op.drop_index(op.f("ix_datasets_tokenizer_hash"), table_name="datasets")
    op.drop_index(op.f("ix_datasets_dataset_hash"), table_name="datasets")
    op.drop_table("datasets")
