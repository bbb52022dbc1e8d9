"""Writing a `FinishedVersion` (data.py) as a new version `name@N`: one transaction, bulk
inserts (no ORM object per row), the hashes taken from it (never computed again here), and the
`VersionInfo` made from what was written (never read back). A failure or Ctrl-C before the
commit rolls back everything, leaving the registry exactly as it was; the commit is the line
between "nothing was written" and "NAME@N was written", and an interruption is reported on the
right side of it, found by asking the database (`interrupted`), never guessed from where the
interruption landed.

Numbers never depend on luck or retries: the transaction first locks the name's row in
`version_numbers` (SQLite: the whole database, taken by BEGIN IMMEDIATE before any read;
PostgreSQL: `SELECT ... FOR UPDATE` after an `INSERT ... ON CONFLICT DO NOTHING` that makes
sure the row exists), so concurrent writers into one name take turns and each gets the next
number, whatever their count.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, Callable, Optional

from sqlalchemy import Connection, Engine, func, insert, inspect, select, update

from ..data import FinishedVersion, VersionInfo
from ..errors import Interrupted
from . import bulk_rows, lineage
from .engine import fresh, write_transaction
from .interruptions import interrupted_line
from .names import check_name
from .refs import resolve
from .schema import (
    Merge,
    ParityLanguage,
    ParityMerge,
    Removal,
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


def _bulk_plain(conn: Connection, tbl: Any, version_id: int, columns: Mapping[str, bulk_rows.Column]) -> None:
    """Inserts one version's rows of `tbl`, given as `columns` (each column's values in row
    order), straight through the driver, many rows per statement (bulk_rows.py)."""
    mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    sqlite = conn.dialect.driver == "pysqlite"
    bulk_rows.insert(conn.exec_driver_sql, tbl.name, version_id, columns, mark, sqlite=sqlite)


def _bulk(conn: Connection, tbl: Any, rows: list[dict[str, Any]]) -> None:
    for i in range(0, len(rows), _BATCH):
        conn.execute(insert(tbl), rows[i : i + _BATCH])


def _next_number(conn: Connection, name: str) -> int:
    """One more than the highest number `name` ever had (removed versions included), with the
    name's counter row locked until the transaction ends."""
    nt, vt = table(VersionNumber), table(Version)
    # The connection's own dialect (already loaded by its engine): importing PostgreSQL's at
    # module level took a fifth of the start-up of every command, on SQLite too.
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        conn.execute(pg_insert(nt).values(name=name, last_number=0).on_conflict_do_nothing(index_elements=[nt.c.name]))
    else:
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert  # likewise

        conn.execute(
            sqlite_insert(nt).values(name=name, last_number=0).on_conflict_do_nothing(index_elements=[nt.c.name])
        )
    last = conn.execute(select(nt.c.last_number).where(nt.c.name == name).with_for_update()).scalar_one()
    live = conn.execute(select(func.max(vt.c.number)).where(vt.c.name == name)).scalar() or 0
    number: int = max(last, live) + 1
    conn.execute(update(nt).where(nt.c.name == name).values(last_number=number))
    return number


def _as_stored(conn: Connection, column: Any, value: Any) -> Any:
    """`value` as the database gives it back from `column` (SQLite: a datetime without its time
    zone), by the column type's own processors, without asking it. (PostgreSQL has none for a
    datetime: it stays the aware UTC time, the same instant it reads back.)"""
    typ = column.type.dialect_impl(conn.dialect)
    bind, result = typ.bind_processor(conn.dialect), typ.result_processor(conn.dialect, None)
    value = bind(value) if bind is not None else value
    return result(value) if result is not None else value


def _insert(
    conn: Connection,
    name: str,
    version: FinishedVersion,
    created_at: datetime,
    message: Optional[str],
    samples: Sequence[tuple[str, list[int]]],
    same_run: tuple[str, ...],
) -> VersionInfo:
    data = version.data
    number = _next_number(conn, name)
    vt = table(Version)
    res = conn.execute(
        insert(vt).values(
            name=name,
            number=number,
            algorithm=data.algorithm,
            config=data.config,
            vocab_size=data.vocab_size,
            content_hash=version.content_hash,
            sha256=version.sha256,
            source=data.source,
            created_at=created_at,
            message=message,
        )
    )
    assert res.inserted_primary_key is not None
    vid = res.inserted_primary_key[0]
    conn.execute(insert(table(VersionContent)).values(version_id=vid, content=version.content))
    lineage.write(conn, vid, data, version.content_hash)
    bulk_tables = {
        "tokens": Token,
        "merges": Merge,
        "removals": Removal,
        "parity_languages": ParityLanguage,
        "parity_merges": ParityMerge,
    }
    for name_, columns in bulk_rows.of_version(data):
        _bulk_plain(conn, table(bulk_tables[name_]), vid, columns)
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
    return VersionInfo(
        id=vid,
        name=name,
        number=number,
        algorithm=data.algorithm,
        config=json.loads(json.dumps(data.config)),  # as read back: decoded anew, tuples as lists
        vocab_size=data.vocab_size,
        content_hash=version.content_hash,
        sha256=version.sha256,
        source=data.source,
        created_at=_as_stored(conn, vt.c.created_at, created_at),
        message=message,
        same_run=same_run,
    )


def written(engine: Engine, name: str, content_hash: str, created_at: datetime) -> Optional[VersionInfo]:
    """The version a writer committed, if it did (found by name, hash and creation time), asked
    on a new connection. Raises whatever the database raises when it cannot be asked."""
    vt = table(Version)
    probe = fresh(engine)
    try:
        with probe.connect() as conn:
            if not inspect(conn).has_table(vt.name):
                # Interrupted while the registry itself was being made (its tables come before
                # any version): nothing was written.
                return None
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
        return interrupted_line(name, None, asked=False)
    return interrupted_line(name, None if done is None else (done.ref, done.content_hash))


def record(
    engine: Engine,
    name: str,
    version: FinishedVersion,
    *,
    message: Optional[str] = None,
    samples: Sequence[tuple[str, list[int]]] = (),
    created_at: Optional[datetime] = None,
) -> VersionInfo:
    """Adds `version` (with its sample strings and their ids) as the next version of `name`.
    `created_at` (default: now) also identifies this write when asking whether it happened."""
    return record_all(engine, name, [(version, samples)], message=message, created_at=created_at)[0]


def record_all(
    engine: Engine,
    name: str,
    items: Sequence[tuple[FinishedVersion, Sequence[tuple[str, list[int]]]]],
    *,
    message: Optional[str] = None,
    created_at: Optional[datetime] = None,
    ready: Optional[Callable[[], object]] = None,
) -> list[VersionInfo]:
    """Adds each (version, samples) as the next versions of `name`, in order, in one
    transaction: several sizes from one run are written all or none. Each returned version's
    `same_run` names the versions of its run written before it here (as a read at that point
    of the transaction would: the first of a run names none). `ready` is called after the rows
    and before the commit; what it raises rolls them back."""
    check_name(name)
    created_at = created_at or datetime.now(timezone.utc)
    # The rows are hundreds of thousands of fresh tuples that cannot form cycles; Python's
    # cyclic collector would walk every live object again and again while they are made.
    paused = gc.isenabled()
    gc.disable()
    try:
        with write_transaction(engine) as conn:
            out: list[VersionInfo] = []
            for version, samples in items:
                same_run = version.same_run([(v, w) for v, (w, _) in zip(out, items)])
                out.append(_insert(conn, name, version, created_at, message, samples, same_run))
            if ready is not None:
                ready()
            return out
    except KeyboardInterrupt:
        # All or none: the last version's row tells which.
        raise interrupted(engine, name, items[-1][0].content_hash, created_at) from None
    finally:
        if paused:
            gc.enable()
