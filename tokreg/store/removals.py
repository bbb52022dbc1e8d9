"""Reads of PickyBPE's removal events (the `removals` table; Chizhov et al., arXiv 2409.04599):
how many a version has and the first of them, readable, for `show` and the version page. The
writer records them with the version (writer.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from sqlalchemy import Connection, func, select

from ..data import JsonValue
from .schema import Removal, Token, table


@dataclass(frozen=True)
class FirstRemoval(JsonValue):
    event: int
    after_rank: int  # the merge it followed
    token_id: int
    token: Optional[str]  # readable text (None: not UTF-8 on its own)
    ios: Optional[float]
    count: Optional[int]
    removed_for_good: bool  # kind `removed`: not in the final vocabulary (else merged back later)


@dataclass(frozen=True)
class RemovalSummary(JsonValue):
    """A version's removal events: their number, how many tokens are out for good, the first few."""

    events: int
    removed_tokens: int
    first: tuple[FirstRemoval, ...]


def summary(conn: Connection, version_id: int, first: int = 10) -> Optional[RemovalSummary]:
    """None when the version has no removal events."""
    rt, tt = table(Removal), table(Token)
    n = conn.execute(select(func.count()).select_from(rt).where(rt.c.version_id == version_id)).scalar() or 0
    if not n:
        return None
    gone = (
        conn.execute(
            select(func.count()).select_from(tt).where(tt.c.version_id == version_id, tt.c.kind == "removed")
        ).scalar()
        or 0
    )
    rows = conn.execute(
        select(rt.c.event, rt.c.after_rank, rt.c.token_id, rt.c.ios, rt.c.count, tt.c.text, tt.c.kind)
        .join(tt, (tt.c.version_id == rt.c.version_id) & (tt.c.id == rt.c.token_id))
        .where(rt.c.version_id == version_id)
        .order_by(rt.c.event)
        .limit(first)
    ).all()
    return RemovalSummary(
        events=n,
        removed_tokens=gone,
        first=tuple(FirstRemoval(e, a, t, text, ios, c, kind == "removed") for e, a, t, ios, c, text, kind in rows),
    )
