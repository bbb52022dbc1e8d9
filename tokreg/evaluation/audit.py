"""`tokreg audit`: which tokens of a version a model could never see, or would see too rarely
to learn, after Land & Bartolo (2024), "Fishing for Magikarp: Automatically Detecting
Under-trained Tokens in Large Language Models" (arXiv:2405.05417).

The tokenizer-only check, through the one encoder interface (`Tokenizer`): decode each token
on its own and encode that text again. Each token gets one category:

- `special`: a special token (control and unknown pieces included); not produced from text.
- `undecodable`: its bytes are not valid UTF-8 on their own (part of a multi-byte character,
  such as the 0x80-0xFF bytes of byte-level BPE); it can only appear next to the rest.
- `reachable`: its text encodes back to exactly this token.
- `reachable_in_context`: it does not come back alone, but does next to an anchor token (the
  token of one ASCII character, such as `a`) before, after or on both sides: the pieces that occur
  inside a word (WordPiece's `##ing`, SentencePiece's pieces without `▁`, character-level BPE's
  pieces without `</w>`).
- `unreachable`: neither: its text encodes to other tokens (listed), alone and in every
  context tried. A model never sees such a token in training, so its embedding stays as
  initialised (Land & Bartolo's "unreachable" tokens).

What only a registry has: the count of each token in the final segmentation of its training
corpus, and the pair count at which it was merged. A token is `under_trained` when it was
trained and is `unused` (count 0: merged as a step towards longer tokens, or a base symbol the
corpus lacks), `rare` (used fewer than `rare_below` times) or `rare_merge` (merged from a pair
seen fewer than `rare_below` times). Imported versions carry no counts, and Unigram training
records scores, not counts; for them only the categories apply.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Optional

from sqlalchemy import Engine

from .. import algorithms
from ..data import StoredVersion, VersionInfo
from ..encoding.tokenizer import Tokenizer
from ..errors import InputError
from ..store import evaluations

CATEGORIES = ("reachable", "reachable_in_context", "unreachable", "undecodable", "special")
UNDER_TRAINED = ("unused", "rare", "rare_merge")
#: A token used or merged fewer times than this in training is rare (Land & Bartolo's
#: under-trained tokens are ones a model saw "a handful of times" or never).
RARE_BELOW = 10
#: Texts whose one-token encodings serve as anchors for the in-context check: a few first,
#: then, for the tokens none of those bring back, every printable ASCII character.
ANCHOR_TEXTS = (("a", "e", "x", "z", "0", "."), tuple(chr(c) for c in range(0x21, 0x7F)))

_VISIBLE = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"}


def visible(raw: bytes) -> str:
    """A token's bytes for people, whitespace made visible: space ␣, newline ↵, tab ⇥, CR ␍;
    other invisible characters as \\uXXXX, bytes that are not UTF-8 as \\xNN, a backslash as \\\\."""
    out = []
    for ch in raw.decode("utf-8", "surrogateescape"):
        code = ord(ch)
        if ch in _VISIBLE:
            out.append(_VISIBLE[ch])
        elif 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, smuggled through as a surrogate
            out.append(f"\\x{code - 0xDC00:02x}")
        elif ch == "\\":
            out.append("\\\\")
        elif ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out)


@dataclass(frozen=True)
class AuditedToken:
    id: int
    bytes: bytes
    kind: str
    category: str
    under_trained: Optional[str]  # unused | rare | rare_merge | None
    reencoded: Optional[list[int]]  # what its text encodes to on its own, when that is not [id]
    count: Optional[int]  # uses in the final segmentation of the training corpus
    merge_rank: Optional[int]
    merge_count: Optional[int]  # the pair's count when the merge was chosen

    @property
    def shown(self) -> str:
        return visible(self.bytes)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "token": self.shown,
            "kind": self.kind,
            "category": self.category,
            "under_trained": self.under_trained,
            "reencoded": self.reencoded,
            "count": self.count,
            "merge_rank": self.merge_rank,
            "merge_count": self.merge_count,
        }


@dataclass(frozen=True)
class AuditReport:
    """What `Registry.audit` returns: every token of a version with its category and, for a
    trained version, whether it is under-trained. `stored` is True when read from the registry."""

    ref: str
    hash: str
    title: str
    rare_below: int
    has_counts: bool  # whether the version carries training counts (a trained BPE/WordPiece)
    stored: bool
    computed_at: datetime
    tokens: list[AuditedToken]

    def categories(self) -> dict[str, int]:
        c = Counter(t.category for t in self.tokens)
        return {k: c.get(k, 0) for k in CATEGORIES}

    def under_trained(self) -> dict[str, int]:
        c = Counter(t.under_trained for t in self.tokens if t.under_trained)
        return {k: c.get(k, 0) for k in UNDER_TRAINED}

    def to_json(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "hash": self.hash,
            "title": self.title,
            "vocab_size": len(self.tokens),
            "rare_below": self.rare_below,
            "has_training_counts": self.has_counts,
            "stored": self.stored,
            "computed_at": self.computed_at.isoformat(),
            "categories": self.categories(),
            "under_trained": self.under_trained() if self.has_counts else None,
            "tokens": [t.to_json() for t in self.tokens if t.category != "reachable" or t.under_trained],
        }


def check_rare(rare_below: int) -> int:
    if not isinstance(rare_below, int) or isinstance(rare_below, bool) or rare_below < 1:
        raise InputError(f"--rare must be a whole number of occurrences, 1 or more, not {rare_below!r}")
    return rare_below


def categorize(tok: Tokenizer, ids: list[int]) -> dict[int, tuple[str, Optional[list[int]]]]:
    """id -> (category, what its text encodes to on its own when that is not the token), for
    the ids of `tok`."""
    specials = set(tok.special_tokens.values())
    out: dict[int, tuple[str, Optional[list[int]]]] = {}
    texts: dict[int, str] = {}
    for i in ids:
        if i in specials:
            out[i] = ("special", None)
            continue
        try:
            texts[i] = tok.decode_bytes([i]).decode("utf-8")
        except UnicodeDecodeError:
            out[i] = ("undecodable", None)
    pending = list(texts)
    alone = tok.encode_ordinary_batch([texts[i] for i in pending])
    missed: dict[int, list[int]] = {}
    for i, got in zip(pending, alone):
        if got == [i]:
            out[i] = ("reachable", None)
        else:
            missed[i] = got
    for anchor_texts in ANCHOR_TEXTS:
        for i in _in_context(tok, [i for i in missed if i not in out], specials, anchor_texts):
            out[i] = ("reachable_in_context", missed[i])
    for i, got in missed.items():
        out.setdefault(i, ("unreachable", got))
    return out


def _in_context(tok: Tokenizer, ids: list[int], specials: set[int], anchor_texts: tuple[str, ...]) -> set[int]:
    """The ids (of `ids`) that come back as themselves next to an anchor token (one of
    `anchor_texts` that encodes to one token): after it, before it, or between two of it."""
    anchors: list[int] = []
    for anchor in anchor_texts:
        enc = tok.encode_ordinary(anchor)
        if len(enc) == 1 and enc[0] not in specials and enc[0] not in anchors:
            anchors.append(enc[0])
    tries: list[tuple[int, list[int]]] = []  # (token, the sequence whose text must encode back to it)
    for i in ids:
        for a in anchors:
            tries.extend((i, seq) for seq in ([a, i], [i, a], [a, i, a]))
    texts: list[str] = []
    kept: list[tuple[int, list[int]]] = []
    for i, seq in tries:
        try:
            texts.append(tok.decode_bytes(seq).decode("utf-8"))
        except UnicodeDecodeError:
            continue
        kept.append((i, seq))
    found: set[int] = set()
    for (i, seq), got in zip(kept, tok.encode_ordinary_batch(texts)):
        if got == seq:
            found.add(i)
    return found


def audit(stored: StoredVersion, tok: Tokenizer, rare_below: int) -> list[dict[str, Any]]:
    """The audit rows of a version (the columns of `audit_tokens`), in id order."""
    cats = categorize(tok, [t.id for t in stored.tokens])
    merged = {m.result: m for m in stored.merges}
    rows = []
    for t in stored.tokens:
        category, reencoded = cats[t.id]
        m = merged.get(t.id)
        rows.append(
            {
                "token_id": t.id,
                "category": category,
                "under_trained": None
                if category == "special"
                else _under_trained(t.count, m.count if m is not None else None, rare_below),
                "reencoded": reencoded,
                "merge_rank": m.rank if m is not None else None,
                "merge_count": m.count if m is not None else None,
            }
        )
    return rows


def _under_trained(count: Optional[int], merge_count: Optional[int], rare_below: int) -> Optional[str]:
    if count is not None and count == 0:
        return "unused"
    if count is not None and count < rare_below:
        return "rare"
    if merge_count is not None and merge_count < rare_below:
        return "rare_merge"
    return None


def run(
    engine: Engine,
    v: VersionInfo,
    stored: Callable[[], StoredVersion],
    load: Callable[[], Tokenizer],
    *,
    rare_below: int = RARE_BELOW,
    recompute: bool = False,
) -> AuditReport:
    """The audit of version `v`: read from the registry when it holds one made with the same
    `rare_below` (unless `recompute`), else computed from the version's rows (`stored()`) and
    its tokenizer (`load()`) and stored in one transaction."""
    with engine.connect() as conn:
        have = None if recompute else evaluations.audit(conn, v.id)
    if have is not None and have.rare_below == rare_below and len(have.tokens) == v.vocab_size:
        rows, at, was_stored = have.tokens, have.computed_at, True
    else:
        version = stored()
        computed = audit(version, load(), rare_below)
        at = evaluations.write(engine, lambda conn: evaluations.save_audit(conn, v.id, rare_below, computed))
        rows = [{**r, "bytes": t.bytes, "kind": t.kind, "count": t.count} for r, t in zip(computed, version.tokens)]
        was_stored = False
    tokens = [
        AuditedToken(
            id=r["token_id"],
            bytes=bytes(r["bytes"]),
            kind=r["kind"],
            category=r["category"],
            under_trained=r["under_trained"],
            reencoded=list(r["reencoded"]) if r["reencoded"] is not None else None,
            count=r["count"],
            merge_rank=r["merge_rank"],
            merge_count=r["merge_count"],
        )
        for r in rows
    ]
    return AuditReport(
        ref=v.ref,
        hash=v.content_hash,
        title=algorithms.of(v.algorithm, v.config).model.title,
        rare_below=rare_below,
        has_counts=any(t.count is not None for t in tokens),
        stored=was_stored,
        computed_at=at,
        tokens=tokens,
    )
