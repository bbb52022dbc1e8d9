"""Evaluation results and token audits as rows: the texts (`eval_texts`), one row per version,
text and metric (`evaluations`), and one row per audited token (`audits`, `audit_tokens`).

Writes replace what was stored for the same version and text (or the same version's audit) in
the caller's transaction, so a result is either the old one or the new one, never a mix.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Optional, TypeVar

from sqlalchemy import Connection, Engine, delete, insert, select, update
from sqlalchemy.exc import IntegrityError as DbIntegrityError

from ..data import StoredEvaluation
from ..package_version import __version__
from .engine import write_transaction
from .schema import Audit, AuditToken, EvalText, Evaluation, Token, table

_BATCH = 20_000
#: Two runs storing the same text or version at once collide on a key; the later one tries again.
_ATTEMPTS = 5
T = TypeVar("T")


def write(engine: Engine, work: Callable[[Connection], T]) -> T:
    """Runs `work` in one transaction. When a concurrent run stored the same rows first (a key
    already taken), it runs again: it then finds those rows and replaces them."""
    for attempt in range(_ATTEMPTS):
        try:
            with write_transaction(engine) as conn:
                return work(conn)
        except DbIntegrityError:
            if attempt == _ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class TextRow:
    fingerprint: str
    name: str
    language: Optional[str]
    bytes: int
    characters: int
    words: int
    parts: Optional[list[str]] = None  # a parallel set: its texts' fingerprints


@dataclass(frozen=True)
class StoredScores:
    values: dict[str, float]  # metric -> value
    computed_at: datetime


def save_text(conn: Connection, row: TextRow) -> None:
    """Records a text once; a language given later replaces the one stored (it is a label of
    the text, not part of what was measured)."""
    t = table(EvalText)
    have = conn.execute(select(t.c.language).where(t.c.fingerprint == row.fingerprint)).first()
    if have is None:
        conn.execute(
            insert(t).values(
                fingerprint=row.fingerprint,
                name=row.name,
                language=row.language,
                bytes=row.bytes,
                characters=row.characters,
                words=row.words,
                parts=row.parts,
            )
        )
    elif row.language is not None and have[0] != row.language:
        conn.execute(update(t).where(t.c.fingerprint == row.fingerprint).values(language=row.language))


def scores(conn: Connection, version_id: int, fingerprint: str, metrics: Iterable[str]) -> Optional[StoredScores]:
    """The stored values of `metrics` for a version on a text, or None unless all are there."""
    e = table(Evaluation)
    wanted = list(metrics)
    rows = conn.execute(
        select(e.c.metric, e.c.value, e.c.computed_at).where(
            e.c.version_id == version_id, e.c.text_fingerprint == fingerprint, e.c.metric.in_(wanted)
        )
    ).all()
    if len(rows) != len(wanted):
        return None
    return StoredScores(values={r[0]: r[1] for r in rows}, computed_at=min(_aware(r[2]) for r in rows))


def of_version(conn: Connection, version_id: int) -> list[StoredEvaluation]:
    """Every stored result of a version, one entry per text it was measured on (parallel sets
    included), oldest text first."""
    e, t = table(Evaluation), table(EvalText)
    rows = conn.execute(
        select(t.c.fingerprint, t.c.name, t.c.language, t.c.bytes, e.c.metric, e.c.value, e.c.computed_at)
        .join(t, t.c.fingerprint == e.c.text_fingerprint)
        .where(e.c.version_id == version_id)
        .order_by(e.c.computed_at, t.c.name, e.c.metric)
    ).all()
    texts: dict[str, tuple[str, Optional[str], int]] = {}  # fingerprint -> (name, language, bytes), oldest first
    metrics: dict[str, dict[str, float]] = {}
    latest: dict[str, datetime] = {}
    for fp, name, language, size, metric, value, at in rows:
        texts.setdefault(fp, (name, language, size))
        metrics.setdefault(fp, {})[metric] = value
        latest[fp] = max(latest.get(fp, _aware(at)), _aware(at))
    return [
        StoredEvaluation(
            text=name, language=language, fingerprint=fp, bytes=size, metrics=metrics[fp], computed_at=latest[fp]
        )
        for fp, (name, language, size) in texts.items()
    ]


def save_scores(
    conn: Connection,
    version_id: int,
    fingerprint: str,
    values: Mapping[str, float],
    *,
    reference: Optional[str] = None,
    at: Optional[datetime] = None,
) -> datetime:
    """Stores `values` (metric -> value) for a version on a text, replacing those metrics'
    previous values. Returns the time recorded."""
    e = table(Evaluation)
    now = at or datetime.now(timezone.utc)
    conn.execute(
        delete(e).where(e.c.version_id == version_id, e.c.text_fingerprint == fingerprint, e.c.metric.in_(list(values)))
    )
    conn.execute(
        insert(e),
        [
            {
                "version_id": version_id,
                "text_fingerprint": fingerprint,
                "metric": metric,
                "value": float(value),
                "reference": reference,
                "computed_at": now,
                "tokreg_version": __version__,
            }
            for metric, value in values.items()
        ],
    )
    return now


@dataclass(frozen=True)
class StoredAudit:
    rare_below: int
    computed_at: datetime
    # in id order: the audit_tokens columns, with the token's bytes, kind and count from `tokens`
    tokens: list[dict[str, Any]]


_AUDIT_COLUMNS = ("token_id", "category", "under_trained", "reencoded", "merge_rank", "merge_count")


def audit(conn: Connection, version_id: int) -> Optional[StoredAudit]:
    """A version's stored audit, or None. One query: a stored audit is shown without reading
    (and hashing) the whole version."""
    a, at, tt = table(Audit), table(AuditToken), table(Token)
    head = conn.execute(select(a.c.rare_below, a.c.computed_at).where(a.c.version_id == version_id)).first()
    if head is None:
        return None
    keys = (*_AUDIT_COLUMNS, "bytes", "kind", "count")
    rows = conn.execute(
        select(*(at.c[c] for c in _AUDIT_COLUMNS), tt.c.bytes, tt.c.kind, tt.c.count)
        .join(tt, (tt.c.version_id == at.c.version_id) & (tt.c.id == at.c.token_id))
        .where(at.c.version_id == version_id)
        .order_by(at.c.token_id)
    )
    tokens = [dict(zip(keys, r)) for r in rows]  # plain tuples: .mappings() costs ~5 µs a row
    return StoredAudit(rare_below=head[0], computed_at=_aware(head[1]), tokens=tokens)


def save_audit(conn: Connection, version_id: int, rare_below: int, tokens: Sequence[Mapping[str, Any]]) -> datetime:
    """Replaces a version's audit with `tokens` (dicts with the keys of `audit_tokens`)."""
    a, at = table(Audit), table(AuditToken)
    now = datetime.now(timezone.utc)
    conn.execute(delete(at).where(at.c.version_id == version_id))
    conn.execute(delete(a).where(a.c.version_id == version_id))
    conn.execute(
        insert(a).values(version_id=version_id, rare_below=rare_below, computed_at=now, tokreg_version=__version__)
    )
    rows = [{"version_id": version_id, **{c: t.get(c) for c in _AUDIT_COLUMNS}} for t in tokens]
    for i in range(0, len(rows), _BATCH):
        conn.execute(insert(at), rows[i : i + _BATCH])
    return now


def _aware(dt: datetime) -> datetime:
    # SQLite hands back naive datetimes (stored as UTC); others keep the zone.
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)
