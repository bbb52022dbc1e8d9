"""The lean write behind `tokreg train` into a SQLite registry: the versions of one training run
recorded through the standard library's sqlite3, without importing SQLAlchemy and the store
(about 0.2 s of CPU in a fresh process, which is most of what a small corpus costs besides
training).

It writes what writer.py writes, row for row and value for value (the same JSON text, the same
datetime strings, the same BLOBs; tests/test_sqlite_write.py compares dumps of registries
written both ways), in one `BEGIN IMMEDIATE` transaction taken before the first read, so the
version number comes the same way. It takes only what it can take exactly as the registry
would, and `open_file` says None for everything else, which then goes the usual way
(`Registry`): a location that is not an existing SQLite file, a schema other than the newest
(the registry upgrades it first), files or media that are not writable (the registry says why),
or a database error of any kind (the registry names it properly).

    >>> rec = open_file("registry.db")            # None: open a Registry instead
    >>> rec.record_trained("gpt-mini", finished)  # -> [Recorded(info, version), ...]
"""

from __future__ import annotations

import gc
import json
import os
import sqlite3
from collections.abc import Sequence
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any, Callable, Optional

from ..data import FinishedVersion, Recorded, VersionInfo
from ..errors import Interrupted
from . import bulk_rows
from .interruptions import interrupted_line
from .names import check_name
from .revisions import HEAD
from .sqlite_files import BUSY_SECONDS, default_path, existing_ancestor, read_only_media
from .sqlite_read import file_of

#: The columns of `training_runs` a run record fills (schema.py's, checked by a test).
RUN_COLUMNS = (
    "config",
    "corpus_fingerprint",
    "corpus_files",
    "corpus_bytes",
    "tokreg_version",
    "threads",
    "count_seconds",
    "train_seconds",
    "total_seconds",
    "started_at",
    "run_group",
    "counting",
)
_JSON = frozenset({"config", "corpus_files", "counting"})


def stored_time(t: datetime) -> str:
    """A datetime as SQLAlchemy's SQLite DATETIME stores it (its zone left out)."""
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d} {t.hour:02d}:{t.minute:02d}:{t.second:02d}.{t.microsecond:06d}"


def _value(column: str, v: Any) -> Any:
    """A run record's value as its column stores it."""
    if column in _JSON:
        return json.dumps(v)
    if isinstance(v, datetime):
        return stored_time(v)
    return v


def _writable(path: Path) -> bool:
    """writable.py's checks of a SQLite registry's files, answered yes or no (no: the registry
    says why)."""
    if read_only_media(path) or not os.access(path, os.W_OK):
        return False
    if not os.access(existing_ancestor(path.parent), os.W_OK | os.X_OK):
        return False
    sides = (Path(str(path) + s) for s in ("-wal", "-shm"))
    return all(os.access(p, os.W_OK) for p in sides if p.exists())


#: (version, name) -> the sample strings with their ids (versions/samples.py), which the
#: caller makes: encoding is a wing above the store.
Samples = Callable[[FinishedVersion, str], list[tuple[str, list[int]]]]


def open_file(db: Optional[str], samples: Samples) -> Optional[SqliteRecorder]:
    """A recorder into the SQLite registry `db` (or TOKREG_DB, or the default), checked
    writable by a write rolled back, or None when this lean write cannot take it exactly."""
    if db is None:
        db = os.environ.get("TOKREG_DB") or str(default_path())
    found = file_of(db)
    if found is None or not _writable(Path(found)):
        return None
    try:
        conn = sqlite3.connect(found, isolation_level=None, check_same_thread=False)
    except sqlite3.Error:
        return None
    try:
        conn.execute(f"PRAGMA busy_timeout={BUSY_SECONDS * 1000}")
        conn.execute("PRAGMA foreign_keys=ON")
        if conn.execute("SELECT version_num FROM alembic_version").fetchall() != [(HEAD,)]:
            conn.close()
            return None
        conn.execute("BEGIN IMMEDIATE")  # what the registry's write probe does
        try:
            conn.execute("UPDATE alembic_version SET version_num = version_num")
        finally:
            conn.execute("ROLLBACK")
    except sqlite3.Error:
        conn.close()
        return None
    return SqliteRecorder(conn, Path(found), samples)


class SqliteRecorder:
    """`Registry.record_trained` on an open sqlite3 connection (see the module header), with
    the few things `tokreg train` asks of the registry it recorded into."""

    #: It never creates a registry (open_file takes existing ones only).
    created = False

    def __init__(self, conn: sqlite3.Connection, path: Path, samples: Samples):
        self._conn = conn
        self._samples = samples
        self.where = str(path)
        self._pending: Optional[tuple[str, str, str]] = None

    def close(self) -> None:
        self._conn.close()

    def interruption(self) -> Interrupted:
        """The line for a Ctrl-C: which write, if any, was completed, asked of the database."""
        if self._pending is None:
            return Interrupted("interrupted; nothing was written to the registry")
        name, content_hash, created = self._pending
        try:
            with sqlite3.connect(self.where) as probe:
                row = probe.execute(
                    "SELECT number FROM versions WHERE name = ? AND content_hash = ? AND created_at = ?",
                    (name, content_hash, created),
                ).fetchone()
        except sqlite3.Error:
            return interrupted_line(name, None, asked=False)
        return interrupted_line(name, None if row is None else (f"{name}@{row[0]}", content_hash))

    def record_trained(
        self,
        name: str,
        trained: Sequence[FinishedVersion],
        *,
        message: Optional[str] = None,
        created_at: Optional[datetime] = None,
        ready: Optional[Callable[[], object]] = None,
    ) -> list[Recorded]:
        """The versions of one training run as the next versions of `name`, all or none, a size
        that gave the same content as a smaller one once (as `Registry.record_trained`, `ready`
        too)."""
        check_name(name)
        unique = list({v.content_hash: v for v in reversed(trained)}.values())[::-1]
        created_at = created_at or datetime.now(timezone.utc)
        when = stored_time(created_at)
        self._pending = (name, unique[-1].content_hash, when)
        conn = self._conn
        paused = gc.isenabled()
        gc.disable()  # as writer.py: the rows are many fresh tuples that cannot form cycles
        conn.execute("BEGIN IMMEDIATE")
        try:
            infos: list[VersionInfo] = []
            for version in unique:
                same = version.same_run(list(zip(infos, unique)))
                # The samples are encoded last, after the rows (the encoder may still be being
                # compiled on another thread meanwhile, cli/train.py); the statements are the same.
                samples = partial(self._samples, version, name)
                infos.append(_insert(conn, name, version, when, message, samples, same))
            if ready is not None:
                ready()
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            if paused:
                gc.enable()
        return [Recorded(info, v) for info, v in zip(infos, unique)]


def _insert(
    conn: sqlite3.Connection,
    name: str,
    version: FinishedVersion,
    when: str,
    message: Optional[str],
    samples: Callable[[], list[tuple[str, list[int]]]],
    same_run: tuple[str, ...],
) -> VersionInfo:
    data = version.data
    assert data.lineage is None and data.source == "train", "the lean write records trained versions only"
    conn.execute("INSERT INTO version_numbers (name, last_number) VALUES (?, 0) ON CONFLICT (name) DO NOTHING", (name,))
    (last,) = conn.execute("SELECT last_number FROM version_numbers WHERE name = ?", (name,)).fetchone()
    (live,) = conn.execute("SELECT max(number) FROM versions WHERE name = ?", (name,)).fetchone()
    number = max(last, live or 0) + 1
    conn.execute("UPDATE version_numbers SET last_number = ? WHERE name = ?", (number, name))
    cur = conn.execute(
        "INSERT INTO versions (name, number, algorithm, config, vocab_size, content_hash, sha256, source, "
        "created_at, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            name,
            number,
            data.algorithm,
            json.dumps(data.config),
            len(data.tokens),
            version.content_hash,
            version.sha256,
            data.source,
            when,
            message,
        ),
    )
    vid = cur.lastrowid
    assert vid is not None
    conn.execute("INSERT INTO version_contents (version_id, content) VALUES (?, ?)", (vid, version.content))
    conn.execute(
        "INSERT INTO lineage (version_id, parent_id, parent_ref, parent_hash, derivation, details) "
        "VALUES (?, NULL, NULL, NULL, 'trained', NULL)",
        (vid,),
    )
    for name_, columns in bulk_rows.of_version(data):
        bulk_rows.insert(conn.execute, name_, vid, columns, sqlite=True)
    rounds = ((r.round, r.phase, r.vocab_size, r.log_likelihood) for r in data.rounds)
    _many(conn, "training_rounds", vid, ("round", "phase", "vocab_size", "log_likelihood"), rounds)
    if data.run is not None:
        run = {k: _value(k, v) for k, v in data.run.items() if k in RUN_COLUMNS}
        names = ["version_id", *run]
        conn.execute(
            f"INSERT INTO training_runs ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
            (vid, *run.values()),
        )
    samples_rows = [(i, s, json.dumps(ids)) for i, (s, ids) in enumerate(samples())]
    _many(conn, "samples", vid, ("position", "text", "ids"), samples_rows)
    return VersionInfo(
        id=vid,
        name=name,
        number=number,
        algorithm=data.algorithm,
        config=json.loads(json.dumps(data.config)),
        vocab_size=len(data.tokens),
        content_hash=version.content_hash,
        sha256=version.sha256,
        source=data.source,
        created_at=datetime.fromisoformat(when),
        message=message,
        same_run=same_run,
    )


def _many(conn: sqlite3.Connection, table: str, vid: int, columns: Sequence[str], rows: Any) -> None:
    """Inserts rows of one version, the version id written into the statement (the same in
    every row: one value less to bind per row)."""
    head = f"INSERT INTO {table} (version_id, {', '.join(columns)}) VALUES ({int(vid)}, "
    conn.executemany(head + ", ".join("?" * len(columns)) + ")", rows)


__all__ = ["RUN_COLUMNS", "SqliteRecorder", "open_file", "stored_time"]
