"""LiteToken's residue measure as rows (`residue_runs`, `residue_tokens`; migration 0011): per
version and text, each token BPE's merge loop formed with its final and intermediate counts.
A new measure of the same version on the same text replaces the old one in the caller's
transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Optional

from sqlalchemy import Connection, case, delete, func, insert, select

from ..package_version import __version__
from .schema import EvalText, ResidueRun, ResidueToken, table

_BATCH = 20_000


@dataclass(frozen=True)
class StoredResidues:
    """A stored measure: (token id, final, intermediate) rows in id order, and when."""

    rows: list[tuple[int, int, int]]
    computed_at: datetime


@dataclass(frozen=True)
class ResidueSummary:
    """One stored measure of a version, for `show` and the version page: the text, how many
    tokens were seen formed (at least `min_seen` times) and how many of them are residues."""

    text: str
    fingerprint: str
    measured: int
    residues: int
    computed_at: datetime


def save(conn: Connection, version_id: int, fingerprint: str, rows: Sequence[tuple[int, int, int]]) -> datetime:
    """Replaces the measure of `version_id` on the text `fingerprint` (recorded in eval_texts)."""
    run, tok = table(ResidueRun), table(ResidueToken)
    now = datetime.now(timezone.utc)
    where = (run.c.version_id == version_id) & (run.c.text_fingerprint == fingerprint)
    conn.execute(delete(tok).where((tok.c.version_id == version_id) & (tok.c.text_fingerprint == fingerprint)))
    conn.execute(delete(run).where(where))
    conn.execute(
        insert(run).values(
            version_id=version_id, text_fingerprint=fingerprint, computed_at=now, tokreg_version=__version__
        )
    )
    values = [
        {"version_id": version_id, "text_fingerprint": fingerprint, "token_id": i, "final": f, "intermediate": m}
        for i, f, m in rows
    ]
    for k in range(0, len(values), _BATCH):
        conn.execute(insert(tok), values[k : k + _BATCH])
    return now


def read(conn: Connection, version_id: int, fingerprint: str) -> Optional[StoredResidues]:
    run, tok = table(ResidueRun), table(ResidueToken)
    at = conn.execute(
        select(run.c.computed_at).where((run.c.version_id == version_id) & (run.c.text_fingerprint == fingerprint))
    ).scalar()
    if at is None:
        return None
    rows = conn.execute(
        select(tok.c.token_id, tok.c.final, tok.c.intermediate)
        .where((tok.c.version_id == version_id) & (tok.c.text_fingerprint == fingerprint))
        .order_by(tok.c.token_id)
    )
    return StoredResidues([(int(i), int(f), int(m)) for i, f, m in rows], _aware(at))


def summaries(conn: Connection, version_id: int, below: float, min_seen: int) -> list[ResidueSummary]:
    """Every stored measure of a version, oldest first, with its residues counted by the rule
    final / (final + intermediate) < `below` among tokens seen at least `min_seen` times."""
    run, tok, text = table(ResidueRun), table(ResidueToken), table(EvalText)
    seen = tok.c.final + tok.c.intermediate
    counted = (
        select(
            tok.c.text_fingerprint,
            func.count().label("measured"),
            func.sum(case((tok.c.final < below * seen, 1), else_=0)).label("residues"),
        )
        .where((tok.c.version_id == version_id) & (seen >= min_seen))
        .group_by(tok.c.text_fingerprint)
        .subquery()
    )
    rows = conn.execute(
        select(text.c.name, run.c.text_fingerprint, counted.c.measured, counted.c.residues, run.c.computed_at)
        .join(text, text.c.fingerprint == run.c.text_fingerprint)
        .outerjoin(counted, counted.c.text_fingerprint == run.c.text_fingerprint)
        .where(run.c.version_id == version_id)
        .order_by(run.c.computed_at)
    )
    return [ResidueSummary(n, fp, int(m or 0), int(r or 0), _aware(at)) for n, fp, m, r, at in rows]


def _aware(dt: datetime) -> datetime:
    # SQLite hands back naive datetimes (stored as UTC); others keep the zone.
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)
