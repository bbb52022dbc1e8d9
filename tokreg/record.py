"""Writing a `TokenizerData` as a new version `name@N`: one transaction, bulk inserts (no ORM
object per row). A failure or Ctrl-C at any point rolls back everything, leaving the registry
exactly as it was."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Optional

from sqlalchemy import Engine, func, insert, select, update
from sqlalchemy.exc import IntegrityError as DbIntegrityError

from . import samples
from .errors import Interrupted
from .result import TokenizerData
from .store.models import Merge, Token, TrainingRound, TrainingRun, Version, VersionNumber, table
from .versions import VersionInfo, check_name, resolve

_BATCH = 20_000


def _bulk(conn: Any, table: Any, rows: list[dict[str, Any]]) -> None:
    for i in range(0, len(rows), _BATCH):
        conn.execute(insert(table), rows[i : i + _BATCH])


def _next_number(conn: Any, name: str) -> int:
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


def record(engine: Engine, name: str, data: TokenizerData, message: Optional[str] = None) -> VersionInfo:
    """Adds `data` as the next version of `name` and returns it."""
    check_name(name)
    content_hash, sha = data.hashes()
    vt = table(Version)
    for attempt in range(3):
        try:
            with engine.begin() as conn:
                number = _next_number(conn, name)
                res = conn.execute(
                    insert(vt).values(
                        name=name,
                        number=number,
                        algorithm=data.algorithm,
                        config=data.config,
                        vocab_size=len(data.tokens),
                        content_hash=content_hash,
                        sha256=sha,
                        source=data.source,
                        created_at=datetime.now(timezone.utc),
                        message=message,
                    )
                )
                assert res.inserted_primary_key is not None
                vid = res.inserted_primary_key[0]
                _bulk(
                    conn,
                    table(Token),
                    [
                        {
                            "version_id": vid,
                            "id": t.id,
                            "bytes": t.bytes,
                            "text": t.text,
                            "kind": t.kind,
                            "count": t.count,
                            "score": t.score,
                        }
                        for t in data.tokens
                    ],
                )
                if data.merges:
                    _bulk(
                        conn,
                        table(Merge),
                        [
                            {
                                "version_id": vid,
                                "rank": m.rank,
                                "left_id": m.left,
                                "right_id": m.right,
                                "result_id": m.result,
                                "count": m.count,
                                "score": m.score,
                                "left_count": m.left_count,
                                "right_count": m.right_count,
                            }
                            for m in data.merges
                        ],
                    )
                if data.rounds:
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
                samples.store(conn, vid, data)
                return resolve(conn, f"{name}@{number}")
        except DbIntegrityError:
            if attempt == 2:
                raise
            continue  # another writer took the same number; take the next one
        except KeyboardInterrupt:
            raise Interrupted("interrupted while writing; the registry was left unchanged") from None
    raise AssertionError("unreachable")
