"""The playground's view of an encoding: the ids `Tokenizer` gives (the library's own, through
the same encoder `tokreg.load` returns), each distinct token's bytes drawn readably, the byte
span of the input each token covers, and the spans where several versions segment the same text
differently.

Byte spans come from decoding: a token covers the bytes it adds to the decoded text. For every
lossless tokenizer (byte-level BPE, Unigram and SentencePiece BPE with byte fallback, where `▁`
decodes to a space and the dummy prefix to nothing) the pieces put end to end are exactly the
input's bytes, and the view gives them as `ends` (token k covers `[ends[k-1], ends[k])`, the
first from 0). When they are not (WordPiece and character-level BPE normalize text, drop spaces
and have unknown tokens), the version's spans are left out (`exact_spans` false) rather than
guessed, and it takes no part in the disagreement marks.

What a token adds can depend on the token before it (a decoder that drops the leading space of
the whole text drops it from a `▁word` decoded alone), so `pieces` tries, cheapest first: each
distinct token alone; each distinct token after one fixed token; each token after its own
predecessor (each distinct pair decoded once). Each try costs one decode per distinct token or
pair, never per token, and the first that rebuilds the input wins. (`encode_with_offsets` would
give spans too, but in the core it takes time quadratic in a run of whitespace for Unigram and
in CJK text for WordPiece: 95 s for 200 KB of spaces.)

A disagreement is a stretch between two byte offsets where every compared version has a token
boundary, and inside which at least one of them has another: there the versions cut the same
bytes differently. Each version lists its tokens inside one as ranges of token indices.

The view is sized for the largest request (200 KB of text, four versions, some 700,000 tokens):
per token only its id and end go out; what is the same for every use of a token (its bytes,
drawn) is sent once per distinct id, in `pieces`.

"""

from __future__ import annotations

from itertools import accumulate
from typing import Any, Optional

from ..encoding.tokenizer import Tokenizer
from ..registry import Registry
from . import show
from .cache import Lru

#: Compiled versions kept ready (by content hash: an alias that moves loads the new one).
CACHE_SIZE = 8


class Encoders:
    """Tokenizers of a registry by ref, loaded once per content hash."""

    def __init__(self, reg: Registry, size: int = CACHE_SIZE):
        self.reg = reg
        self._cache: Lru[str, Tokenizer] = Lru(size)

    def get(self, ref: str) -> Tokenizer:
        v = self.reg.resolve(ref)
        return self._cache.get(v.content_hash, lambda: self.reg.load(v.ref, lock=False))


def pieces(tok: Tokenizer, ids: list[int], raw: bytes) -> Optional[list[bytes]]:
    """The bytes each token adds to the decoded text, when they put together exactly `raw`; else
    None (see the module docstring for the three tries)."""
    if not tok.lossless or not ids:
        return [] if not ids and not raw else None
    distinct = set(ids)
    alone = {i: tok.decode_bytes([i]) for i in distinct}
    cut = [alone[i] for i in ids]
    if b"".join(cut) == raw:
        return cut
    first = ids[0]
    head = alone[first]
    after = {i: _added(tok, first, head, i) for i in distinct}
    cut = [head] + [after[i] for i in ids[1:]]
    if b"".join(cut) == raw:
        return cut
    pairs: dict[tuple[int, int], bytes] = {}  # (previous id, id) -> what id adds after it
    cut = [head]
    for prev, i in zip(ids, ids[1:]):
        key = (prev, i)
        if key not in pairs:
            pairs[key] = _added(tok, prev, alone[prev], i)
        cut.append(pairs[key])
    return cut if b"".join(cut) == raw else None


def _added(tok: Tokenizer, prev: int, prev_alone: bytes, i: int) -> bytes:
    """What token `i` adds to the decoded text right after token `prev`."""
    both = tok.decode_bytes([prev, i])
    return both[len(prev_alone) :] if both.startswith(prev_alone) else tok.decode_bytes([i])


def encode(tok: Tokenizer, text: str, *, allow_special: bool = False) -> dict[str, Any]:
    """One version's view of `text`: ids, token ends (when exact) and each distinct token drawn."""
    ids = tok.encode(text, allowed_special="all") if allow_special else tok.encode_ordinary(text)
    cut = pieces(tok, ids, text.encode("utf-8"))
    drawn = {}
    for i in set(ids):
        b = tok.token_bytes(i)
        drawn[str(i)] = {"bytes": b.hex(), "segments": show.segments(b), "partial": not show.is_utf8(b)}
    return {
        "ref": tok.ref,
        "hash": tok.hash,
        "title": tok.title,
        "lossless": tok.lossless,
        "exact_spans": cut is not None,
        "count": len(ids),
        "ids": ids,
        "ends": list(accumulate(len(p) for p in cut)) if cut is not None else None,
        "pieces": drawn,
        "disagree": [],
    }


def disagreements(views: list[dict[str, Any]], n_bytes: int) -> list[tuple[int, int]]:
    """Byte spans [start, end) where the versions with exact spans cut the text differently; sets
    each such version's `disagree` to the ranges [first, last) of its token indices inside them
    (tokens that cover bytes: an empty token, such as a dummy prefix, is never marked)."""
    exact = [v for v in views if v["exact_spans"]]
    if len(exact) < 2:
        return []
    cuts = [set(v["ends"]) for v in exact]
    common = sorted(set.intersection(*cuts) | {0, n_bytes})
    every = sorted(set.union(*cuts) | {0, n_bytes})
    # (s, e) between neighbouring common cuts disagrees when some version cuts strictly inside;
    # `every` holds the common cuts too, so that is when e is not the next cut after s.
    spans = []
    k = 0
    for s, e in zip(common, common[1:]):
        while every[k] <= s:
            k += 1
        if every[k] < e:
            spans.append((s, e))
    for v in exact:
        v["disagree"] = _inside(v["ends"], spans)
    return spans


def _inside(ends: list[int], spans: list[tuple[int, int]]) -> list[list[int]]:
    """Ranges [first, last) of the token indices whose bytes lie in one of `spans` (sorted)."""
    out: list[list[int]] = []
    j = 0
    start = 0
    for k, end in enumerate(ends):
        if end > start:
            while j < len(spans) and spans[j][1] <= start:
                j += 1
            if j < len(spans) and spans[j][0] <= start:
                if out and out[-1][1] == k:
                    out[-1][1] = k + 1
                else:
                    out.append([k, k + 1])
        start = end
    return out
