"""Parity-aware BPE's record read back from its rows (`parity_languages`, `parity_merges`;
migration 0012) for `show` and the version page (`summary`); the writers insert them through
bulk_rows.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from sqlalchemy import Connection, func, select

from .schema import ParityLanguage, ParityMerge, table


@dataclass(frozen=True)
class LanguageCost:
    """One language of a parity-aware run, at the version's size."""

    language: str
    train_bytes: int
    train_tokens: int
    dev_bytes: Optional[int]  # None without a parallel set
    dev_tokens: Optional[int]
    merges: int  # merges that went to this language

    @property
    def bytes_per_token(self) -> float:
        return self.train_bytes / self.train_tokens if self.train_tokens else 0.0


@dataclass(frozen=True)
class ParitySummary:
    """The languages of a version trained by parity-aware BPE, in code order, and the merges
    chosen by the count over all languages (`--global-merges`)."""

    languages: tuple[LanguageCost, ...]
    global_merges: int

    @property
    def parallel(self) -> bool:
        return all(c.dev_tokens is not None for c in self.languages)

    def premiums(self) -> dict[str, float]:
        """Each language's development tokens over the fewest (1.0 for the cheapest); empty
        without a parallel set."""
        if not self.parallel:
            return {}
        least = min(c.dev_tokens or 0 for c in self.languages)
        return {c.language: (c.dev_tokens or 0) / least if least else 0.0 for c in self.languages}


def summary(conn: Connection, version_id: int) -> Optional[ParitySummary]:
    """The version's languages with their costs and merges, or None (not trained by parity-aware BPE)."""
    lt, mt = table(ParityLanguage), table(ParityMerge)
    rows = conn.execute(select(lt).where(lt.c.version_id == version_id).order_by(lt.c.language)).all()
    if not rows:
        return None
    chosen: dict[str, int] = dict(
        conn.execute(
            select(mt.c.language, func.count())
            .where(mt.c.version_id == version_id, mt.c.chosen.is_(True))
            .group_by(mt.c.language)
        ).all()
    )
    ranks = conn.execute(select(func.count(func.distinct(mt.c.rank))).where(mt.c.version_id == version_id)).scalar()
    costs = tuple(
        LanguageCost(
            r.language,
            int(r.train_bytes),
            int(r.train_tokens),
            None if r.dev_bytes is None else int(r.dev_bytes),
            None if r.dev_tokens is None else int(r.dev_tokens),
            int(chosen.get(r.language, 0)),
        )
        for r in rows
    )
    return ParitySummary(costs, int(ranks or 0) - sum(c.merges for c in costs))
