"""Tokens and merges clustered on their key (SQLite): `WITHOUT ROWID` tables.

`tokens` and `merges` are keyed by (version_id, id) and (version_id, rank). As rowid tables,
SQLite kept every row twice: in the table's B-tree (by a hidden rowid) and in the primary key's
automatic index. A `WITHOUT ROWID` table is one B-tree ordered by the key: a version's rows are
written once and read as one range (a 21k-token version: the two tables 1.83 -> 1.34 MB, the
registry file 17% smaller, and as much less written to the WAL and checkpointed; the CPU of the
insert did not change measurably). Nothing else changes: the same columns in the same order, the same
constraints and names, the same rows.

SQLite cannot change this in place, so each table is rebuilt: its own CREATE TABLE text (from
`sqlite_master`, so every column added since 0001 comes along as it is) with `WITHOUT ROWID`
added, under a new name; the rows copied; the old table dropped; the new one renamed. The
views are dropped first and recreated from their own text after (a view naming a table that is
being replaced would stop the rename). All of it runs in the migrations' one transaction
(store/migrate.py): a crash at any statement leaves the registry as it was.

PostgreSQL has no rowid: nothing to do there (the model's `sqlite_with_rowid=False` is
SQLite's option only).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27
"""

from __future__ import annotations

import re

from alembic import op
from sqlalchemy import text

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

TABLES = ("tokens", "merges")
_SUFFIX = re.compile(r"\)\s*WITHOUT\s+ROWID\s*$", re.IGNORECASE)


def _rebuild(clustered: bool) -> None:
    conn = op.get_bind()
    if conn.dialect.name != "sqlite":
        return
    views = conn.execute(text("SELECT name, sql FROM sqlite_master WHERE type = 'view' ORDER BY rowid")).all()
    for name, _ in views:
        op.execute(f'DROP VIEW "{name}"')
    for table in TABLES:
        (sql,) = conn.execute(
            text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = :t"), {"t": table}
        ).one()
        head = re.match(rf'\s*CREATE\s+TABLE\s+("{table}"|{table})\s*\(', sql, re.IGNORECASE)
        assert head is not None, f"unexpected definition of {table}: {sql}"
        body = _SUFFIX.sub(")", sql[head.end() - 1 :].rstrip())
        new = f"_{table}_0014"
        op.execute(f'CREATE TABLE "{new}" {body}' + (" WITHOUT ROWID" if clustered else ""))
        op.execute(f'INSERT INTO "{new}" SELECT * FROM "{table}" ORDER BY 1, 2')  # in key order
        op.execute(f'DROP TABLE "{table}"')
        op.execute(f'ALTER TABLE "{new}" RENAME TO "{table}"')
    for _, sql in views:
        op.execute(sql)


def upgrade() -> None:
    _rebuild(clustered=True)


def downgrade() -> None:
    _rebuild(clustered=False)
