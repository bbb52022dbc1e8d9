"""Writing a `TokenizerData` as a new version `name@N`: one transaction, bulk inserts (no ORM
object per row). A failure or Ctrl-C before the commit rolls back everything, leaving the
registry exactly as it was; the commit is the line between "nothing was written" and
"NAME@N was written", and an interruption is reported on the right side of it.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any, Optional

from sqlalchemy import Connection, Engine, func, insert, select, update
from sqlalchemy.exc import IntegrityError as DbIntegrityError

from ..data import TokenizerData
from ..errors import Interrupted
from .refs import VersionInfo, check_name, resolve
from .schema import Merge, Sample, Token, TrainingRound, TrainingRun, Version, VersionNumber, table

_BATCH = 20_000
#: Concurrent writers that collide on a number try again this many times.
_ATTEMPTS = 20


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
    """One more than the highest number `name` ever had (removed versions included)."""
    nt, vt = table(VersionNumber), table(Version)
    last = conn.execute(select(nt.c.last_number).where(nt.c.name == name)).scalar()
    live = conn.execute(select(func.max(vt.c.number)).where(vt.c.name == name)).scalar() or 0
    number = max(last or 0, live) + 1
    if last is None:
        conn.execute(insert(nt).values(name=name, last_number=number))
    else:
        conn.execute(update(nt).where(nt.c.name == name).values(last_number=number))
    return number


def _insert(
    conn: Connection,
    name: str,
    data: TokenizerData,
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


def _written(engine: Engine, name: str, content_hash: str, created_at: datetime) -> Optional[VersionInfo]:
    """The version this writer committed, if it did (found by name, hash and creation time)."""
    vt = table(Version)
    try:
        with engine.connect() as conn:
            number = conn.execute(
                select(vt.c.number).where(
                    vt.c.name == name, vt.c.content_hash == content_hash, vt.c.created_at == created_at
                )
            ).scalar()
            return None if number is None else resolve(conn, f"{name}@{number}")
    except Exception:  # a registry we can no longer read cannot confirm the write
        return None


def record(
    engine: Engine,
    name: str,
    data: TokenizerData,
    *,
    message: Optional[str] = None,
    samples: Sequence[tuple[str, list[int]]] = (),
) -> VersionInfo:
    """Adds `data` (with its sample strings and their ids) as the next version of `name`."""
    return record_all(engine, name, [(data, samples)], message=message)[0]


def record_all(
    engine: Engine,
    name: str,
    items: Sequence[tuple[TokenizerData, Sequence[tuple[str, list[int]]]]],
    *,
    message: Optional[str] = None,
) -> list[VersionInfo]:
    """Adds each (data, samples) as the next versions of `name`, in order, in one transaction:
    several sizes from one run are written all or none."""
    check_name(name)
    hashes = [data.hashes() for data, _ in items]
    created_at = datetime.now(timezone.utc)
    # The rows are hundreds of thousands of fresh tuples that cannot form cycles; Python's
    # cyclic collector would walk every live object again and again while they are made.
    paused = gc.isenabled()
    gc.disable()
    try:
        return _record_all(engine, name, items, hashes, created_at, message)
    finally:
        if paused:
            gc.enable()


def _record_all(
    engine: Engine,
    name: str,
    items: Sequence[tuple[TokenizerData, Sequence[tuple[str, list[int]]]]],
    hashes: list[tuple[str, str]],
    created_at: datetime,
    message: Optional[str],
) -> list[VersionInfo]:
    for attempt in range(_ATTEMPTS):
        try:
            with engine.begin() as conn:
                return [
                    _insert(conn, name, data, h, created_at, message, samples)
                    for (data, samples), h in zip(items, hashes)
                ]
        except DbIntegrityError:
            if attempt == _ATTEMPTS - 1:
                raise
            continue  # another writer took the same number; take the next one
        except KeyboardInterrupt:
            done = _written(engine, name, hashes[-1][0], created_at)
            if done is not None:
                raise Interrupted(
                    f"interrupted after {done.ref} ({done.content_hash}) was written to the registry; it is complete"
                ) from None
            raise Interrupted("interrupted while writing; nothing was written, the registry is unchanged") from None
    raise AssertionError("unreachable")
