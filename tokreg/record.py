"""Writing a `TokenizerData` as a new version `name@N`: one transaction, bulk inserts (no ORM
object per row). A failure or Ctrl-C at any point rolls back everything, leaving the registry
exactly as it was."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Optional

from sqlalchemy import Engine, func, insert, select
from sqlalchemy.exc import IntegrityError as DbIntegrityError

from .errors import Interrupted
from .result import TokenizerData
from .store.models import Merge, Token, TrainingRun, Version
from .versions import VersionInfo, check_name, resolve

_BATCH = 20_000


def _bulk(conn: Any, table: Any, rows: list[dict[str, Any]]) -> None:
    for i in range(0, len(rows), _BATCH):
        conn.execute(insert(table), rows[i : i + _BATCH])


def record(engine: Engine, name: str, data: TokenizerData, message: Optional[str] = None) -> VersionInfo:
    """Adds `data` as the next version of `name` and returns it."""
    check_name(name)
    content_hash, sha = data.hashes()
    vt = Version.__table__
    for attempt in range(3):
        try:
            with engine.begin() as conn:
                number = (conn.execute(select(func.max(vt.c.number)).where(vt.c.name == name)).scalar() or 0) + 1
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
                vid = res.inserted_primary_key[0]
                _bulk(conn, Token.__table__, [
                    {"version_id": vid, "id": t.id, "bytes": t.bytes, "text": t.text, "kind": t.kind,
                     "count": t.count, "score": t.score}
                    for t in data.tokens
                ])
                if data.merges:
                    _bulk(conn, Merge.__table__, [
                        {"version_id": vid, "rank": m.rank, "left_id": m.left, "right_id": m.right,
                         "result_id": m.result, "count": m.count, "score": m.score}
                        for m in data.merges
                    ])
                if data.run is not None:
                    run = {k: v for k, v in data.run.items() if k in TrainingRun.__table__.c}
                    conn.execute(insert(TrainingRun.__table__).values(version_id=vid, **run))
                return resolve(conn, f"{name}@{number}")
        except DbIntegrityError:
            if attempt == 2:
                raise
            continue  # another writer took the same number; take the next one
        except KeyboardInterrupt:
            raise Interrupted("interrupted while writing; the registry was left unchanged") from None
    raise AssertionError("unreachable")
