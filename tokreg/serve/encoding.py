"""The playground's view of an encoding: the ids `Tokenizer` gives (the library's own, through
the same encoder `tokreg.load` returns), each token's bytes drawn readably, the byte span of the
input it covers, and the spans where several versions segment the same text differently.

Byte spans come from decoding: token k covers what `decode_bytes(ids[k-1:k+1])` adds after
`decode_bytes(ids[k-1:k])`, which for every lossless tokenizer (byte-level BPE, Unigram and
SentencePiece BPE with byte fallback, where `▁` decodes to a space and the dummy prefix to
nothing) puts the pieces end to end into exactly the input's bytes. When they do not (WordPiece
and character-level BPE normalize text, drop spaces and have unknown tokens), the version's
spans are left out (`exact_spans` false) rather than guessed, and it takes no part in the
disagreement marks.

A disagreement is a stretch between two byte offsets where every compared version has a token
boundary, and inside which at least one of them has another: there the versions cut the same
bytes differently.
"""

from __future__ import annotations

from bisect import bisect_left
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


def pieces(tok: Tokenizer, ids: list[int], raw: bytes, token_bytes: list[bytes]) -> list[bytes]:
    """What each token adds to the decoded bytes (see the module docstring). When the tokens'
    own bytes already put together the input (byte-level BPE), they are the pieces."""
    if b"".join(token_bytes) == raw:
        return token_bytes
    out: list[bytes] = []
    prev = b""
    for k, i in enumerate(ids):
        single = tok.decode_bytes([i])
        if k == 0:
            out.append(single)
        else:
            pair = tok.decode_bytes([ids[k - 1], i])
            out.append(pair[len(prev) :] if pair.startswith(prev) else single)
        prev = single
    return out


def encode(tok: Tokenizer, text: str, *, allow_special: bool = False) -> dict[str, Any]:
    """One version's view of `text`: ids, and per token its id, drawn bytes and byte span."""
    ids = tok.encode(text, allowed_special="all") if allow_special else tok.encode_ordinary(text)
    raw = text.encode("utf-8")
    seen: dict[int, dict[str, Any]] = {}  # what is the same for every use of a token
    for i in ids:
        if i not in seen:
            b = tok.token_bytes(i)
            seen[i] = {"raw": b, "bytes": b.hex(), "segments": show.segments(b), "partial": not show.is_utf8(b)}
    cut = pieces(tok, ids, raw, [seen[i]["raw"] for i in ids])
    exact = b"".join(cut) == raw
    tokens = []
    at = 0
    for i, piece in zip(ids, cut):
        s = seen[i]
        t: dict[str, Any] = {"id": i, "bytes": s["bytes"], "segments": s["segments"], "partial": s["partial"]}
        if exact:
            t["start"], t["end"] = at, at + len(piece)
            at += len(piece)
        tokens.append(t)
    return {
        "ref": tok.ref,
        "hash": tok.hash,
        "title": tok.title,
        "lossless": tok.lossless,
        "exact_spans": exact,
        "count": len(ids),
        "ids": ids,
        "tokens": tokens,
    }


def disagreements(views: list[dict[str, Any]], n_bytes: int) -> list[tuple[int, int]]:
    """Byte spans [start, end) where the versions with exact spans cut the text differently;
    marks their tokens inside such a span with `"disagree": True`."""
    exact = [v for v in views if v["exact_spans"]]
    if len(exact) < 2:
        return []
    cuts = [{t["end"] for t in v["tokens"] if t["end"] > t["start"]} for v in exact]
    common = sorted(set.intersection(*cuts) | {0, n_bytes})
    every = sorted(set.union(*cuts))
    # a cut strictly inside (s, e): the first cut after s comes before e
    spans = [(s, e) for s, e in zip(common, common[1:]) if _first_after(every, s) < e]
    starts = [s for s, _ in spans]
    for v in exact:
        for t in v["tokens"]:
            k = bisect_left(starts, t["end"]) - 1
            t["disagree"] = k >= 0 and spans[k][0] <= t["start"] < spans[k][1] and t["end"] > t["start"]
    return spans


def _first_after(sorted_cuts: list[int], x: int) -> float:
    k = bisect_left(sorted_cuts, x + 1)
    return sorted_cuts[k] if k < len(sorted_cuts) else float("inf")
