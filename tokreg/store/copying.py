"""Copying one version's rows from one registry's connection into another registry, in one
write transaction of the destination (the writer's: SQLite `BEGIN IMMEDIATE`, PostgreSQL's name
row locked), so a Ctrl-C or kill -9 leaves the destination without it or with all of it.

Every row that describes the version is copied as it is (ids remapped): the version row (hash,
sha256, config, source, created_at, message), its canonical content, tokens, merges, training
rounds, training run, samples, lineage, audit and audited tokens, parity-aware BPE's languages
and per-merge gains, evaluations and the texts
they were measured on. The destination keeps `name@N` when N was never used there for that
name; otherwise the version gets the next number. Either way an `origins` row names the source
registry, the version's `name@N` there and its hash.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Optional

from sqlalchemy import Connection, Engine, insert, select, update

from ..data import VersionInfo
from . import schema, writer
from .engine import write_transaction
from .refs import by_id
from .schema import table

_BATCH = 5_000
#: Tables whose rows belong to one version by `version_id` alone, in an order that satisfies
#: their foreign keys (an audit before its tokens).
_ROWS = (
    schema.VersionContent,
    schema.TrainingRound,
    schema.Removal,
    schema.Sample,
    schema.Audit,
    schema.AuditToken,
    schema.ParityLanguage,
    schema.ParityMerge,
)
#: Rows of one version measured on a text (`eval_texts`, copied first), runs before their tokens.
_MEASURED = (schema.ResidueRun, schema.ResidueToken)
#: The big ones (hundreds of thousands of rows), of plain values only: read as columns and
#: written through the writer's bulk insert, as a training writes them (writer._bulk_plain).
_PLAIN = (schema.Token, schema.Merge)


@dataclass(frozen=True)
class Copied:
    """One version after a copy: its ref in the source and in the destination, and whether it
    was written now (False: the destination already held it under that name)."""

    source_ref: str
    ref: str
    content_hash: str
    written: bool
    #: The parent's `name@N` in the source when the parent is in neither registry's copy.
    parent_not_copied: Optional[str] = None

    @property
    def renumbered(self) -> bool:
        return self.source_ref != self.ref

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source_ref,
            "ref": self.ref,
            "hash": self.content_hash,
            "written": self.written,
            "renumbered": self.renumbered,
            "parent_not_copied": self.parent_not_copied,
        }


def _utc(value: Any) -> Any:
    """A datetime as an aware UTC instant (SQLite gives them back without a zone, in UTC)."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
    return value


def _rows(conn: Connection, tbl: Any, *where: Any) -> list[dict[str, Any]]:
    return [{k: _utc(v) for k, v in r.items()} for r in conn.execute(select(tbl).where(*where)).mappings()]


def _columns(conn: Connection, tbl: Any, version_id: int) -> dict[str, list[Any]]:
    """One version's rows of `tbl` as {column: values in key order}, without `version_id`, read
    straight through the driver (its plain values are what `_bulk_plain` writes; SQLAlchemy's
    per-row processing cost most of a copy)."""
    cols = [c.name for c in tbl.c if c.name != "version_id"]
    key = [c.name for c in tbl.primary_key.columns if c.name != "version_id"]
    mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    sql = f"SELECT {', '.join(cols)} FROM {tbl.name} WHERE version_id = {mark} ORDER BY {', '.join(key)}"
    cursor = conn.connection.cursor()  # the DBAPI's own rows: no Row object per row
    try:
        cursor.execute(sql, (int(version_id),))
        rows = cursor.fetchall()
    finally:
        cursor.close()
    columns = {c: list(values) for c, values in zip(cols, zip(*rows))}
    if conn.dialect.driver == "psycopg2":  # it reads bytea as memoryview; the others give bytes
        columns = {c: [bytes(x) if isinstance(x, memoryview) else x for x in v] for c, v in columns.items()}
    return columns


def _insert(conn: Connection, tbl: Any, rows: list[dict[str, Any]]) -> None:
    for i in range(0, len(rows), _BATCH):
        conn.execute(insert(tbl), rows[i : i + _BATCH])


def holding(conn: Connection, name: str, content_hash: str) -> Optional[VersionInfo]:
    """The version of `name` holding `content_hash` (the oldest), or None."""
    t = table(schema.Version)
    vid = conn.execute(
        select(t.c.id).where(t.c.name == name, t.c.content_hash == content_hash).order_by(t.c.id).limit(1)
    ).scalar()
    return by_id(conn, vid) if vid is not None else None


def copy_version(
    src: Connection, dst: Engine, v: VersionInfo, source_registry: str, parents: Mapping[int, int]
) -> tuple[VersionInfo, bool, Optional[str]]:
    """Copies `v` (read on `src`) into `dst` in one transaction; returns (the destination's
    version, whether it was written now, the parent's ref when its parent is not there).
    `parents`: source version id -> destination version id, for the versions copied before."""
    vt = table(schema.Version)
    version = _rows(src, vt, vt.c.id == v.id)[0]
    per_table = {tbl.name: _rows(src, tbl, tbl.c.version_id == v.id) for tbl in _ROWS}
    plain = {tbl.name: _columns(src, tbl, v.id) for tbl in _PLAIN}
    line = _rows(src, table(schema.Lineage), table(schema.Lineage).c.version_id == v.id)
    run = _rows(src, table(schema.TrainingRun), table(schema.TrainingRun).c.version_id == v.id)
    evals = _rows(src, table(schema.Evaluation), table(schema.Evaluation).c.version_id == v.id)
    measured = {tbl.name: _rows(src, tbl, tbl.c.version_id == v.id) for tbl in _MEASURED}
    et = table(schema.EvalText)
    wanted_texts = {e["text_fingerprint"] for e in evals} | {e["reference"] for e in evals if e["reference"]}
    wanted_texts |= {r["text_fingerprint"] for r in measured[schema.ResidueRun.name]}
    texts = _rows(src, et, et.c.fingerprint.in_(sorted(wanted_texts))) if wanted_texts else []
    with write_transaction(dst) as conn:
        there = holding(conn, v.name, v.content_hash)
        if there is not None:
            return there, False, None
        number = writer._next_number(conn, v.name)  # locks the name; one more than any it had
        if v.number >= number:  # never used here: keep it
            number = v.number
            nt = table(schema.VersionNumber)
            conn.execute(update(nt).where(nt.c.name == v.name).values(last_number=number))
        res = conn.execute(insert(vt).values({**{k: x for k, x in version.items() if k != "id"}, "number": number}))
        assert res.inserted_primary_key is not None
        vid = res.inserted_primary_key[0]
        for tbl in _PLAIN:
            if plain[tbl.name]:
                writer._bulk_plain(conn, tbl, vid, plain[tbl.name])
        for tbl in _ROWS:
            _insert(conn, tbl, [{**r, "version_id": vid} for r in per_table[tbl.name]])
        _insert(
            conn,
            table(schema.TrainingRun),
            [{**{k: x for k, x in r.items() if k != "id"}, "version_id": vid} for r in run],
        )
        have = set(conn.execute(select(et.c.fingerprint).where(et.c.fingerprint.in_(sorted(wanted_texts)))).scalars())
        _insert(conn, et, [t for t in texts if t["fingerprint"] not in have])
        _insert(conn, table(schema.Evaluation), [{**e, "version_id": vid} for e in evals])
        for tbl in _MEASURED:
            _insert(conn, tbl, [{**r, "version_id": vid} for r in measured[tbl.name]])
        missing = None
        for row in line:
            parent = row["parent_id"]
            row = {**row, "version_id": vid, "parent_id": parents.get(parent) if parent is not None else None}
            if row["parent_id"] is None and row["parent_hash"] is not None:
                pname = str(row["parent_ref"]).rpartition("@")[0]
                found = holding(conn, pname, row["parent_hash"])
                row["parent_id"] = found.id if found is not None else None
                missing = row["parent_ref"] if found is None else None
            _insert(conn, table(schema.Lineage), [row])
        _insert(
            conn,
            table(schema.Origin),
            [
                {
                    "version_id": vid,
                    "registry": source_registry,
                    "ref": v.ref,
                    "content_hash": v.content_hash,
                    "copied_at": datetime.now(timezone.utc),
                }
            ],
        )
        out = by_id(conn, vid)
        assert out is not None
        return out, True, missing


def lineage_parent(conn: Connection, version_id: int) -> Optional[int]:
    """The source-side parent id of a version (None: no parent row, or no parent)."""
    lt = table(schema.Lineage)
    return conn.execute(select(lt.c.parent_id).where(lt.c.version_id == version_id)).scalar()
