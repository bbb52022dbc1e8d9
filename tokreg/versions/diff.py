"""`tokreg diff A B`: how two versions differ, as a `VersionDiff` (the CLI and the web app
render it; its `to_json()` is `tokreg diff --json`).

Tokens are matched by their bytes, never by id, so a token that moved ids is still "common".
Merges are matched by the bytes of (left, right). What is compared depends on what both
versions have: every version has tokens and a config; merges are compared when both have
merges (BPE, WordPiece), scores when both have scores (Unigram log probabilities).

With texts (`--text FILE`), both versions are measured on the same text with the metrics of
`tokreg eval` (evaluate.measure: the one implementation of each), with B - A for each; and
how many words (whitespace-separated, each encoded on its own) segment differently, with the
most frequent of those in both segmentations.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Optional

from .. import algorithms
from ..data import JsonValue, StoredVersion, TokenRow, VersionInfo
from ..encoding.tokenizer import Tokenizer
from ..evaluation import evaluate
from ..training.extend import ids_preserved


@dataclass(frozen=True)
class DiffHead(JsonValue):
    """Which version a side of a diff is."""

    ref: str
    hash: str
    algorithm: str
    title: str


@dataclass(frozen=True)
class Pair(JsonValue):
    """One thing in A and in B (a config value, a special token's id)."""

    a: Any
    b: Any


@dataclass(frozen=True)
class SizeChange(JsonValue):
    a: int
    b: int
    delta: int  # b - a


@dataclass(frozen=True)
class TokenChanges(JsonValue):
    """Tokens (specials aside) matched by their bytes."""

    added: int
    removed: int
    common: int
    common_with_other_id: int
    added_examples: tuple[str, ...]  # in B's id order: the earliest-learned first
    removed_examples: tuple[str, ...]


@dataclass(frozen=True)
class SpecialTokenChanges(JsonValue):
    added: tuple[str, ...]
    removed: tuple[str, ...]
    id_changed: dict[str, Pair]  # special token -> its ids in A and B


@dataclass(frozen=True)
class ConfigChanges(JsonValue):
    changed: dict[str, Pair]  # setting (as people read it) -> its values in A and B
    special_tokens: SpecialTokenChanges


@dataclass(frozen=True)
class Divergence(JsonValue):
    """The first rank where the merges differ: each side's merge there (None past its end)."""

    rank: int
    a: Optional[str]
    b: Optional[str]


@dataclass(frozen=True)
class Rerank(JsonValue):
    merge: str  # "left + right"
    rank_a: int
    rank_b: int


@dataclass(frozen=True)
class MergeChanges(JsonValue):
    """Merges matched by the bytes of (left, right)."""

    a: int
    b: int
    common_prefix: int
    first_divergence: Optional[Divergence]  # None: one list is a prefix of the other, or equal
    only_a: int
    only_b: int
    reranked: int
    largest_reranks: tuple[Rerank, ...]


@dataclass(frozen=True)
class ScoreChange(JsonValue):
    token: str
    a: float
    b: float
    delta: float


@dataclass(frozen=True)
class ScoreChanges(JsonValue):
    common: int
    largest_changes: tuple[ScoreChange, ...]


@dataclass(frozen=True)
class NewId(JsonValue):
    id: int
    token: str
    kind: str


@dataclass(frozen=True)
class IdChanges(JsonValue):
    """Whether B keeps every id of A, and B's tokens at ids A does not have."""

    a_preserved: bool
    first_difference: Optional[str]
    new_ids: int
    new_examples: tuple[NewId, ...]


@dataclass(frozen=True)
class FileEffect(JsonValue):
    """Both versions measured on one text (metric -> value, as `evaluate.measure` gives them)."""

    file: str
    bytes: int
    characters: int
    a: dict[str, float]
    b: dict[str, float]
    delta: dict[str, float]  # B - A


@dataclass(frozen=True)
class WordCounts(JsonValue):
    distinct: int
    occurrences: int
    changed_distinct: int
    changed_occurrences: int


@dataclass(frozen=True)
class ChangedWord(JsonValue):
    word: str
    count: int
    a: tuple[str, ...]  # its pieces in A
    b: tuple[str, ...]


@dataclass(frozen=True)
class TextEffect(JsonValue):
    """The effect of B over A on real text (`--text`)."""

    files: tuple[FileEffect, ...]
    words: WordCounts
    top_changed: tuple[ChangedWord, ...]  # most frequent first


@dataclass(frozen=True)
class VersionDiff(JsonValue):
    """How version `b` differs from `a` (`Registry.diff`). `merges` when both have merges,
    `scores` when both have scores, `text` when texts were given; each absent from the JSON
    when None."""

    a: DiffHead
    b: DiffHead
    vocab_size: SizeChange
    tokens: TokenChanges
    config: ConfigChanges
    ids: IdChanges
    merges: Optional[MergeChanges] = None
    scores: Optional[ScoreChanges] = None
    text: Optional[TextEffect] = None

    def to_json(self) -> dict[str, Any]:
        # The keys in the order `tokreg diff --json` has always had them.
        out: dict[str, Any] = {
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            "vocab_size": self.vocab_size.to_json(),
            "tokens": self.tokens.to_json(),
            "config": self.config.to_json(),
        }
        for key, part in (("merges", self.merges), ("scores", self.scores), ("ids", self.ids), ("text", self.text)):
            if part is not None:
                out[key] = part.to_json()
        return out


def show(raw: bytes) -> str:
    """A token for people: its text, or its bytes escaped when they are not UTF-8 on their own."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(chr(b) if 32 <= b < 127 else f"\\x{b:02x}" for b in raw)


def diff(a: StoredVersion, b: StoredVersion, *, top: int = 10) -> VersionDiff:
    """How version `b` differs from `a`, from their stored (hash-checked) rows."""
    return VersionDiff(
        a=_head(a.info),
        b=_head(b.info),
        vocab_size=SizeChange(len(a.tokens), len(b.tokens), len(b.tokens) - len(a.tokens)),
        tokens=_tokens(a, b, top),
        config=_config(a, b),
        ids=_ids(a, b, top),
        merges=_merges(a, b, top) if a.merges and b.merges else None,
        scores=_scores(a.tokens, b.tokens, top) if _scored(a.tokens) and _scored(b.tokens) else None,
    )


def diff_stored(
    a: StoredVersion, b: StoredVersion, texts: Sequence[evaluate.Text] = (), *, top: int = 10
) -> VersionDiff:
    """`diff`, and with `texts` (read by evaluate.read_texts) the effect on them, both versions
    compiled from their hash-checked content."""
    out = diff(a, b, top=top)
    if not texts:
        return out
    tok_a = Tokenizer(a.content, ref=a.info.ref, expect_hash=a.info.content_hash)
    tok_b = Tokenizer(b.content, ref=b.info.ref, expect_hash=b.info.content_hash)
    return replace(out, text=text_effect(tok_a, tok_b, texts, top=top))


def _ids(a: StoredVersion, b: StoredVersion, top: int) -> IdChanges:
    """Whether B keeps every id of A (what an extension promises: same bytes and kind at every
    id of A, A's merges first at the same ranks), and B's tokens at ids A does not have."""
    kept, why = ids_preserved(a.data(), b.data())
    ids_a = {t.id for t in a.tokens}
    new = [t for t in b.tokens if t.id not in ids_a]
    return IdChanges(
        a_preserved=kept,
        first_difference=why or None,
        new_ids=len(new),
        new_examples=tuple(NewId(t.id, show(t.bytes), t.kind) for t in new[:top]),
    )


def _head(v: VersionInfo) -> DiffHead:
    return DiffHead(v.ref, v.content_hash, v.algorithm, algorithms.of(v.algorithm, v.config).model.title)


def _by_bytes(tokens: list[TokenRow]) -> dict[bytes, int]:
    return {t.bytes: t.id for t in tokens if t.kind != "special"}


def _tokens(a: StoredVersion, b: StoredVersion, top: int) -> TokenChanges:
    ta, tb = _by_bytes(a.tokens), _by_bytes(b.tokens)
    added = [t for t in tb if t not in ta]  # in B's id order: the earliest-learned first
    removed = [t for t in ta if t not in tb]
    moved = sum(1 for t, i in ta.items() if t in tb and tb[t] != i)
    return TokenChanges(
        added=len(added),
        removed=len(removed),
        common=len(ta) - len(removed),
        common_with_other_id=moved,
        added_examples=tuple(show(t) for t in added[:top]),
        removed_examples=tuple(show(t) for t in removed[:top]),
    )


def _pairs(v: StoredVersion) -> list[tuple[bytes, bytes]]:
    raw = {t.id: t.bytes for t in v.tokens}
    return [(raw[m.left], raw[m.right]) for m in v.merges]


def _merges(a: StoredVersion, b: StoredVersion, top: int) -> MergeChanges:
    pa, pb = _pairs(a), _pairs(b)
    prefix = 0
    while prefix < min(len(pa), len(pb)) and pa[prefix] == pb[prefix]:
        prefix += 1
    first = None
    if prefix < max(len(pa), len(pb)):
        first = Divergence(
            rank=prefix,
            a=_merge_text(pa[prefix]) if prefix < len(pa) else None,
            b=_merge_text(pb[prefix]) if prefix < len(pb) else None,
        )
    rank_a = {p: r for r, p in enumerate(pa)}
    rank_b = {p: r for r, p in enumerate(pb)}
    moved = sorted(
        ((abs(rank_b[p] - r), r, rank_b[p], p) for p, r in rank_a.items() if p in rank_b and rank_b[p] != r),
        key=lambda x: (-x[0], x[1]),
    )
    return MergeChanges(
        a=len(pa),
        b=len(pb),
        common_prefix=prefix,
        first_divergence=first,
        only_a=sum(1 for p in pa if p not in rank_b),
        only_b=sum(1 for p in pb if p not in rank_a),
        reranked=len(moved),
        largest_reranks=tuple(Rerank(_merge_text(p), ra_, rb_) for _, ra_, rb_, p in moved[:top]),
    )


def _merge_text(p: tuple[bytes, bytes]) -> str:
    return f"{show(p[0])} + {show(p[1])}"


def _scored(tokens: list[TokenRow]) -> bool:
    return any(t.score is not None for t in tokens if t.kind != "special")


def _scores(ta: list[TokenRow], tb: list[TokenRow], top: int) -> ScoreChanges:
    sa = {t.bytes: t.score for t in ta if t.score is not None and t.kind != "special"}
    sb = {t.bytes: t.score for t in tb if t.score is not None and t.kind != "special"}
    changes = sorted(((sb[t] - s, t) for t, s in sa.items() if t in sb), key=lambda x: -abs(x[0]))
    return ScoreChanges(
        common=len(changes),
        largest_changes=tuple(ScoreChange(show(t), sa[t], sb[t], d) for d, t in changes[:top]),
    )


def _config(a: StoredVersion, b: StoredVersion) -> ConfigChanges:
    # As people read them: a normalizer's rules by their hash, so a change of rules shows as one.
    ca = {
        "algorithm": a.info.algorithm,
        **algorithms.of(a.info.algorithm, a.info.config).model.display_config(a.info.config),
    }
    cb = {
        "algorithm": b.info.algorithm,
        **algorithms.of(b.info.algorithm, b.info.config).model.display_config(b.info.config),
    }
    changed = {k: Pair(ca.get(k), cb.get(k)) for k in sorted(set(ca) | set(cb)) if ca.get(k) != cb.get(k)}
    spa = {show(t.bytes): t.id for t in a.tokens if t.kind == "special"}
    spb = {show(t.bytes): t.id for t in b.tokens if t.kind == "special"}
    return ConfigChanges(
        changed=changed,
        special_tokens=SpecialTokenChanges(
            added=tuple(sorted(set(spb) - set(spa))),
            removed=tuple(sorted(set(spa) - set(spb))),
            id_changed={s: Pair(spa[s], spb[s]) for s in sorted(set(spa) & set(spb)) if spa[s] != spb[s]},
        ),
    )


# -- the effect on real text -------------------------------------------------------------------------


def text_effect(tok_a: Tokenizer, tok_b: Tokenizer, texts: Sequence[evaluate.Text], *, top: int = 10) -> TextEffect:
    """Both tokenizers measured on each text (evaluate.Text, read by evaluate.read_texts)."""
    files = []
    words: Counter[str] = Counter()
    for t in texts:
        ma, mb = evaluate.measure(tok_a, t), evaluate.measure(tok_b, t)
        files.append(FileEffect(t.name, t.bytes, t.characters, ma, mb, evaluate.deltas(ma, mb)))
        words.update(t.text.split())
    distinct = list(words)
    seg_a, seg_b = tok_a.encode_ordinary_batch(distinct), tok_b.encode_ordinary_batch(distinct)
    changed = [
        (words[w], w, sa, sb) for w, sa, sb in zip(distinct, seg_a, seg_b) if _pieces(tok_a, sa) != _pieces(tok_b, sb)
    ]
    changed.sort(key=lambda x: (-x[0], x[1]))
    return TextEffect(
        files=tuple(files),
        words=WordCounts(
            distinct=len(distinct),
            occurrences=sum(words.values()),
            changed_distinct=len(changed),
            changed_occurrences=sum(c[0] for c in changed),
        ),
        top_changed=tuple(
            ChangedWord(w, c, tuple(_pieces(tok_a, sa)), tuple(_pieces(tok_b, sb))) for c, w, sa, sb in changed[:top]
        ),
    )


def _pieces(tok: Tokenizer, ids: list[int]) -> list[str]:
    return [show(tok.token_bytes(i)) for i in ids]
