"""Writing a `TokenizerData` as a new version `name@N`: one transaction, bulk inserts (no ORM
object per row). A failure or Ctrl-C before the commit rolls back everything, leaving the
registry exactly as it was; the commit is the line between "nothing was written" and
"NAME@N was written", and an interruption is reported on the right side of it, found by asking
the database (`interrupted`), never guessed from where the interruption landed.

Numbers never depend on luck or retries: the transaction first locks the name's row in
`version_numbers` (SQLite: the whole database, taken by BEGIN IMMEDIATE before any read;
PostgreSQL: `SELECT ... FOR UPDATE` after an `INSERT ... ON CONFLICT DO NOTHING` that makes
sure the row exists), so concurrent writers into one name take turns and each gets the next
number, whatever their count.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any, Optional

from sqlalchemy import Connection, Engine, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from ..content import digest
from ..data import TokenizerData
from ..errors import Interrupted
from .engine import fresh, write_transaction
from .refs import VersionInfo, check_name, resolve
from .schema import (
    Merge,
    Sample,
    Token,
    TrainingRound,
    TrainingRun,
    Version,
    VersionContent,
    VersionNumber,
    table,
)

_BATCH = 20_000


def _bulk_plain(conn: Connection, tbl: Any, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]) -> None:
    """Inserts rows of plain values (ints, floats, str, bytes, None) with the driver's own
    executemany: SQLAlchemy's per-row parameter processing was most of the time of recording
    a large vocabulary (tokens and merges are 400k rows for a 200k-token version)."""
    style = conn.dialect.paramstyle
    marks = ", ".join("?" if style == "qmark" else "%s" for _ in columns)
    sql = f"INSERT INTO {tbl.name} ({', '.join(columns)}) VALUES ({marks})"
    for i in range(0, len(rows), _BATCH):
        conn.exec_driver_sql(sql, list(rows[i : i + _BATCH]))


def _bulk(conn: Connection, tbl: Any, rows: list[dict[str, Any]]) -> None:
    for i in range(0, len(rows), _BATCH):
        conn.execute(insert(tbl), rows[i : i + _BATCH])


def _bulk_plain(conn: Connection, tbl: Any, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]) -> None:
    """Inserts rows of plain values (ints, floats, str, bytes, None) with the driver's own
    executemany: SQLAlchemy's per-row parameter processing was most of the time of recording
    a large vocabulary (tokens and merges are 400k rows for a 200k-token version)."""
    style = conn.dialect.paramstyle
    marks = ", ".join("?" if style == "qmark" else "%s" for _ in columns)
    sql = f"INSERT INTO {tbl.name} ({', '.join(columns)}) VALUES ({marks})"
    for i in range(0, len(rows), _BATCH):
        conn.exec_driver_sql(sql, list(rows[i : i + _BATCH]))


def _next_number(conn: Connection, name: str) -> int:
    """One more than the highest number `name` ever had (removed versions included), with the
    name's counter row locked until the transaction ends."""
    nt, vt = table(VersionNumber), table(Version)
    upsert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    conn.execute(upsert(nt).values(name=name, last_number=0).on_conflict_do_nothing(index_elements=[nt.c.name]))
    last = conn.execute(select(nt.c.last_number).where(nt.c.name == name).with_for_update()).scalar_one()
    live = conn.execute(select(func.max(vt.c.number)).where(vt.c.name == name)).scalar() or 0
    number: int = max(last, live) + 1
    conn.execute(update(nt).where(nt.c.name == name).values(last_number=number))
    return number


def _insert(
    conn: Connection,
    name: str,
    data: TokenizerData,
    raw: bytes,
    hashes: tuple[str, str],
    created_at: datetime,
    message: Optional[str],
    samples: Sequence[tuple[str, list[int]]],
) -> VersionInfo:
    number = _next_number(conn, name)
    res = conn.execute(
        insert(table(Version)).values(
            name=name,
            number=number,
            algorithm=data.algorithm,
            config=data.config,
            vocab_size=len(data.tokens),
            content_hash=hashes[0],
            sha256=hashes[1],
            source=data.source,
            created_at=created_at,
            message=message,
        )
    )
    assert res.inserted_primary_key is not None
    vid = res.inserted_primary_key[0]
    conn.execute(insert(table(VersionContent)).values(version_id=vid, content=raw))
    _bulk_plain(
        conn,
        table(Token),
        ("version_id", "id", "bytes", "text", "kind", "count", "score"),
        [(vid, t.id, t.bytes, t.text, t.kind, t.count, t.score) for t in data.tokens],
    )
    _bulk_plain(
        conn,
        table(Merge),
        ("version_id", "rank", "left_id", "right_id", "result_id", "count", "score", "left_count", "right_count"),
        [(vid, m.rank, m.left, m.right, m.result, m.count, m.score, m.left_count, m.right_count) for m in data.merges],
    )
    _bulk(
        conn,
        table(TrainingRound),
        [
            {
                "version_id": vid,
                "round": r.round,
                "phase": r.phase,
                "vocab_size": r.vocab_size,
                "log_likelihood": r.log_likelihood,
            }
            for r in data.rounds
        ],
    )
    if data.run is not None:
        run = {k: v for k, v in data.run.items() if k in table(TrainingRun).c}
        conn.execute(insert(table(TrainingRun)).values(version_id=vid, **run))
    _bulk(
        conn,
        table(Sample),
        [{"version_id": vid, "position": i, "text": s, "ids": ids} for i, (s, ids) in enumerate(samples)],
    )
    return resolve(conn, f"{name}@{number}")


def written(engine: Engine, name: str, content_hash: str, created_at: datetime) -> Optional[VersionInfo]:
    """The version a writer committed, if it did (found by name, hash and creation time), asked
    on a new connection. Raises whatever the database raises when it cannot be asked."""
    vt = table(Version)
    probe = fresh(engine)
    try:
        with probe.connect() as conn:
            number = conn.execute(
                select(vt.c.number).where(
                    vt.c.name == name, vt.c.content_hash == content_hash, vt.c.created_at == created_at
                )
            ).scalar()
            return None if number is None else resolve(conn, f"{name}@{number}")
    finally:
        probe.dispose()


def interrupted(engine: Engine, name: str, content_hash: str, created_at: datetime) -> Interrupted:
    """The one true line for an interruption around the write of `name` with this hash and
    creation time: written and complete, nothing written, or (when the registry cannot be asked)
    that it is one or the other and how to tell."""
    try:
        done = written(engine, name, content_hash, created_at)
    except Exception:  # the registry cannot be asked right now; say so rather than guess
        return Interrupted(
            f"interrupted while writing the next version of {name}; either it was written whole or not at all "
            f"(a write is all-or-nothing): `tokreg list {name}` shows which"
        )
    if done is not None:
        return Interrupted(
            f"interrupted after {done.ref} ({done.content_hash}) was written to the registry; it is complete"
        )
    return Interrupted(
        f"interrupted before {name}'s new version was written; nothing was written, the registry is unchanged"
    )


def record(
    engine: Engine,
    name: str,
    data: TokenizerData,
    *,
    message: Optional[str] = None,
    samples: Sequence[tuple[str, list[int]]] = (),
    created_at: Optional[datetime] = None,
) -> VersionInfo:
    """Adds `data` (with its sample strings and their ids) as the next version of `name`.
    `created_at` (default: now) also identifies this write when asking whether it happened."""
    return record_all(engine, name, [(data, samples)], message=message, created_at=created_at)[0]


def record_all(
    engine: Engine,
    name: str,
    items: Sequence[tuple[TokenizerData, Sequence[tuple[str, list[int]]]]],
    *,
    message: Optional[str] = None,
    created_at: Optional[datetime] = None,
) -> list[VersionInfo]:
    """Adds each (data, samples) as the next versions of `name`, in order, in one transaction:
    several sizes from one run are written all or none."""
    check_name(name)
    raws = [data.content() for data, _ in items]
    hashes = [digest(raw) for raw in raws]
    created_at = created_at or datetime.now(timezone.utc)
    # The rows are hundreds of thousands of fresh tuples that cannot form cycles; Python's
    # cyclic collector would walk every live object again and again while they are made.
    paused = gc.isenabled()
    gc.disable()
    try:
        with write_transaction(engine) as conn:
            return [
                _insert(conn, name, data, raw, h, created_at, message, samples)
                for (data, samples), raw, h in zip(items, raws, hashes)
            ]
    except KeyboardInterrupt:
        # All or none: the last version's row tells which.
        raise interrupted(engine, name, hashes[-1][0], created_at) from None
    finally:
        if paused:
            gc.enable()
