"""`tokreg audit --residues`: LiteToken's intermediate merge residues (Sun, Yang, Lin and Zhang,
"LiteToken: Removing Intermediate Merge Residues From BPE Tokenizers", arXiv 2602.04706), for
trained and imported BPE vocabularies alike.

Encoding a text with BPE's merge loop (src/encode/trace.rs, which gives exactly the encoder's
ids), each token that a merge forms is then either emitted (its final frequency F1) or merged
into a longer token (its intermediate frequency F2). The paper's ratio R(t) = F1 / (F1 + F2)
is near 0 for a token that exists only as a step towards longer ones. Here a token is a
residue when R(t) < `below` (default 0.1) among the tokens formed at least `min_seen` times
(default 10, so that a token seen once or twice is not judged). LiteToken also filters by the
entropy of a token's neighbours, which is not applied here: these counts include short, frequent
building blocks (" t", "er") that the paper's filter would keep.

Base symbols (single bytes, or characters) are never formed by a merge and are not judged.
The measure is stored per version and text (store/residues.py), so `tokreg sql` can ask for any
threshold:

    SELECT token_id, final, intermediate FROM residue_tokens
    WHERE version_id = 1 AND final < 0.1 * (final + intermediate) AND final + intermediate >= 10
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Optional

from sqlalchemy import Engine

from ..data import JsonValue, VersionInfo
from ..encoding.tokenizer import Tokenizer
from ..errors import InputError
from ..store import evaluations, residues
from ..store.evaluations import TextRow
from .audit import visible
from .evaluate import Text

#: R(t) = F1 / (F1 + F2) below this: a residue.
BELOW = 0.1
#: Tokens formed fewer times than this are not judged.
MIN_SEEN = 10


@dataclass(frozen=True)
class ResidueToken:
    id: int
    bytes: bytes
    final: int  # F1: times emitted
    intermediate: int  # F2: times merged into a longer token

    @property
    def ratio(self) -> float:
        return self.final / (self.final + self.intermediate)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "token": visible(self.bytes),
            "final": self.final,
            "intermediate": self.intermediate,
            "ratio": round(self.ratio, 6),
        }


@dataclass(frozen=True)
class ResidueReport(JsonValue):
    """A version's residues on one text: the tokens measured (formed at least `min_seen`
    times), the residues among them (lowest ratio first, then by id), the version's vocabulary
    size, and whether the measure was read from the registry."""

    ref: str
    text: str
    text_bytes: int
    below: float
    min_seen: int
    vocab_size: int
    measured: int
    residues: tuple[ResidueToken, ...]
    stored: bool
    computed_at: datetime

    def to_json(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "text": self.text,
            "text_bytes": self.text_bytes,
            "below": self.below,
            "min_seen": self.min_seen,
            "vocab_size": self.vocab_size,
            "measured": self.measured,
            "residue_count": len(self.residues),
            "residues": [r.to_json() for r in self.residues],
            "stored": self.stored,
            "computed_at": self.computed_at.isoformat(),
        }


def check(below: float, min_seen: int) -> None:
    if not 0 < below <= 1:
        raise InputError(f"--below must be a ratio above 0 and at most 1 (e.g. {BELOW}), not {below}")
    if min_seen < 1:
        raise InputError(f"--min-seen must be at least 1, not {min_seen}")


def measure(tok: Tokenizer, text: Text, threads: int = 0) -> list[tuple[int, int, int]]:
    """(token id, F1, F2) of every token BPE's merge loop formed on `text`, by id."""
    lines = text.text.splitlines(keepends=True)
    emitted, formed, consumed = tok.merge_counts(lines, threads=threads)
    return [(i, emitted[i], consumed[i]) for i in range(len(formed)) if formed[i]]


def run(
    engine: Engine,
    v: VersionInfo,
    text: Text,
    load: Callable[[], Tokenizer],
    *,
    below: float = BELOW,
    min_seen: int = MIN_SEEN,
    recompute: bool = False,
) -> ResidueReport:
    """The residues of `v` on `text`: read from the registry when measured before (unless
    `recompute`), else measured and stored in one transaction."""
    check(below, min_seen)
    stored: Optional[residues.StoredResidues] = None
    if not recompute:
        with engine.connect() as conn:
            stored = residues.read(conn, v.id, text.fingerprint)
    tok = load()
    if stored is not None:
        rows, at = stored.rows, stored.computed_at
    else:
        rows = measure(tok, text)

        def save(conn: Any) -> datetime:
            evaluations.save_text(
                conn,
                TextRow(
                    text.fingerprint, text.name, text.language, text.bytes, text.characters, sum(text.words.values())
                ),
            )
            return residues.save(conn, v.id, text.fingerprint, rows)

        at = evaluations.write(engine, save)
    judged = [(i, f, m) for i, f, m in rows if f + m >= min_seen]
    found = sorted(((i, f, m) for i, f, m in judged if f < below * (f + m)), key=lambda r: (r[1] / (r[1] + r[2]), r[0]))
    return ResidueReport(
        ref=v.ref,
        text=text.name,
        text_bytes=text.bytes,
        below=below,
        min_seen=min_seen,
        vocab_size=v.vocab_size,
        measured=len(judged),
        residues=tuple(ResidueToken(i, tok.token_bytes(i), f, m) for i, f, m in found),
        stored=stored is not None,
        computed_at=at,
    )
