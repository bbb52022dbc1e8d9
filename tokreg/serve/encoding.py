"""The playground's view of an encoding: the ids `Tokenizer` gives (the library's own, through
the same encoder `tokreg.load` returns), each distinct token's bytes drawn readably, the byte
span of the input each token covers, and the spans where several versions segment the same text
differently.

Spans come from `Tokenizer.encode_with_offsets` (computed in the core, with the ids). For every
lossless tokenizer (byte-level BPE, Unigram and SentencePiece BPE with byte fallback) they tile
the input's bytes exactly, and the view gives them as `ends` (token k covers
`[ends[k-1], ends[k])`, the first from 0). When they do not (WordPiece and character-level BPE
normalize text, drop spaces and have unknown tokens), the version's spans are left out
(`exact_spans` false) rather than guessed, and it takes no part in the disagreement marks.

A disagreement is a stretch between two byte offsets where every compared version has a token
boundary, and inside which at least one of them has another: there the versions cut the same
bytes differently. Each version lists its tokens inside one as ranges of token indices.

The view is sized for the largest request (200 KB of text, four versions, some 700,000 tokens):
per token only its id and end go out; what is the same for every use of a token (its bytes,
drawn) is sent once per distinct id, in `pieces`.

"""

from __future__ import annotations

from typing import Any

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


def _tiles(spans: list[tuple[int, int]], n_bytes: int) -> bool:
    """Whether the byte spans put end to end are exactly [0, n_bytes)."""
    at = 0
    for start, end in spans:
        if start != at or end < start:
            return False
        at = end
    return at == n_bytes


def encode(tok: Tokenizer, text: str, *, allow_special: bool = False) -> dict[str, Any]:
    """One version's view of `text`: ids, token ends (when exact) and each distinct token drawn."""
    if allow_special:
        found = tok.encode_with_offsets(text, allowed_special="all")
    else:  # special tokens' text is ordinary text here, as in `encode_ordinary`
        found = tok.encode_with_offsets(text, disallowed_special=())
    ids = found.ids
    exact = _tiles(found.byte_offsets, len(text.encode("utf-8")))
    pieces = {}
    for i in set(ids):
        b = tok.token_bytes(i)
        pieces[str(i)] = {"bytes": b.hex(), "segments": show.segments(b), "partial": not show.is_utf8(b)}
    return {
        "ref": tok.ref,
        "hash": tok.hash,
        "title": tok.title,
        "lossless": tok.lossless,
        "exact_spans": exact,
        "count": len(ids),
        "ids": ids,
        "ends": [end for _, end in found.byte_offsets] if exact else None,
        "pieces": pieces,
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
