"""`tokreg diff A B`: how two versions differ, as plain data (the CLI renders it).

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
from typing import Any

from .. import algorithms
from ..data import StoredVersion, TokenRow, VersionInfo
from ..encoding.tokenizer import Tokenizer
from ..evaluation import evaluate
from ..training.extend import ids_preserved


def show(raw: bytes) -> str:
    """A token for people: its text, or its bytes escaped when they are not UTF-8 on their own."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(chr(b) if 32 <= b < 127 else f"\\x{b:02x}" for b in raw)


def diff(a: StoredVersion, b: StoredVersion, *, top: int = 10) -> dict[str, Any]:
    """How version `b` differs from `a`, from their stored (hash-checked) rows."""
    out: dict[str, Any] = {
        "a": _head(a.info),
        "b": _head(b.info),
        "vocab_size": {"a": len(a.tokens), "b": len(b.tokens), "delta": len(b.tokens) - len(a.tokens)},
        "tokens": _tokens(a, b, top),
        "config": _config(a, b),
    }
    if a.merges and b.merges:
        out["merges"] = _merges(a, b, top)
    if _scored(a.tokens) and _scored(b.tokens):
        out["scores"] = _scores(a.tokens, b.tokens, top)
    out["ids"] = _ids(a, b, top)
    return out


def _ids(a: StoredVersion, b: StoredVersion, top: int) -> dict[str, Any]:
    """Whether B keeps every id of A (what an extension promises: same bytes and kind at every
    id of A, A's merges first at the same ranks), and B's tokens at ids A does not have."""
    kept, why = ids_preserved(a.data(), b.data())
    ids_a = {t.id for t in a.tokens}
    new = [t for t in b.tokens if t.id not in ids_a]
    return {
        "a_preserved": kept,
        "first_difference": why or None,
        "new_ids": len(new),
        "new_examples": [{"id": t.id, "token": show(t.bytes), "kind": t.kind} for t in new[:top]],
    }


def _head(v: VersionInfo) -> dict[str, Any]:
    return {
        "ref": v.ref,
        "hash": v.content_hash,
        "algorithm": v.algorithm,
        "title": algorithms.of(v.algorithm, v.config).model.title,
    }


def _by_bytes(tokens: list[TokenRow]) -> dict[bytes, int]:
    return {t.bytes: t.id for t in tokens if t.kind != "special"}


def _tokens(a: StoredVersion, b: StoredVersion, top: int) -> dict[str, Any]:
    ta, tb = _by_bytes(a.tokens), _by_bytes(b.tokens)
    added = [t for t in tb if t not in ta]  # in B's id order: the earliest-learned first
    removed = [t for t in ta if t not in tb]
    moved = sum(1 for t, i in ta.items() if t in tb and tb[t] != i)
    return {
        "added": len(added),
        "removed": len(removed),
        "common": len(ta) - len(removed),
        "common_with_other_id": moved,
        "added_examples": [show(t) for t in added[:top]],
        "removed_examples": [show(t) for t in removed[:top]],
    }


def _pairs(v: StoredVersion) -> list[tuple[bytes, bytes]]:
    raw = {t.id: t.bytes for t in v.tokens}
    return [(raw[m.left], raw[m.right]) for m in v.merges]


def _merges(a: StoredVersion, b: StoredVersion, top: int) -> dict[str, Any]:
    pa, pb = _pairs(a), _pairs(b)
    prefix = 0
    while prefix < min(len(pa), len(pb)) and pa[prefix] == pb[prefix]:
        prefix += 1
    first = None
    if prefix < max(len(pa), len(pb)):
        first = {
            "rank": prefix,
            "a": _merge_text(pa[prefix]) if prefix < len(pa) else None,
            "b": _merge_text(pb[prefix]) if prefix < len(pb) else None,
        }
    rank_a = {p: r for r, p in enumerate(pa)}
    rank_b = {p: r for r, p in enumerate(pb)}
    moved = sorted(
        ((abs(rank_b[p] - r), r, rank_b[p], p) for p, r in rank_a.items() if p in rank_b and rank_b[p] != r),
        key=lambda x: (-x[0], x[1]),
    )
    return {
        "a": len(pa),
        "b": len(pb),
        "common_prefix": prefix,
        "first_divergence": first,
        "only_a": sum(1 for p in pa if p not in rank_b),
        "only_b": sum(1 for p in pb if p not in rank_a),
        "reranked": len(moved),
        "largest_reranks": [{"merge": _merge_text(p), "rank_a": ra_, "rank_b": rb_} for _, ra_, rb_, p in moved[:top]],
    }


def _merge_text(p: tuple[bytes, bytes]) -> str:
    return f"{show(p[0])} + {show(p[1])}"


def _scored(tokens: list[TokenRow]) -> bool:
    return any(t.score is not None for t in tokens if t.kind != "special")


def _scores(ta: list[TokenRow], tb: list[TokenRow], top: int) -> dict[str, Any]:
    sa = {t.bytes: t.score for t in ta if t.score is not None and t.kind != "special"}
    sb = {t.bytes: t.score for t in tb if t.score is not None and t.kind != "special"}
    changes = sorted(((sb[t] - s, t) for t, s in sa.items() if t in sb), key=lambda x: -abs(x[0]))
    return {
        "common": len(changes),
        "largest_changes": [{"token": show(t), "a": sa[t], "b": sb[t], "delta": d} for d, t in changes[:top]],
    }


def _config(a: StoredVersion, b: StoredVersion) -> dict[str, Any]:
    # As people read them: a normalizer's rules by their hash, so a change of rules shows as one.
    ca = {
        "algorithm": a.info.algorithm,
        **algorithms.of(a.info.algorithm, a.info.config).model.display_config(a.info.config),
    }
    cb = {
        "algorithm": b.info.algorithm,
        **algorithms.of(b.info.algorithm, b.info.config).model.display_config(b.info.config),
    }
    changed = {k: {"a": ca.get(k), "b": cb.get(k)} for k in sorted(set(ca) | set(cb)) if ca.get(k) != cb.get(k)}
    spa = {show(t.bytes): t.id for t in a.tokens if t.kind == "special"}
    spb = {show(t.bytes): t.id for t in b.tokens if t.kind == "special"}
    return {
        "changed": changed,
        "special_tokens": {
            "added": sorted(set(spb) - set(spa)),
            "removed": sorted(set(spa) - set(spb)),
            "id_changed": {s: {"a": spa[s], "b": spb[s]} for s in sorted(set(spa) & set(spb)) if spa[s] != spb[s]},
        },
    }


# -- the effect on real text -------------------------------------------------------------------------


def text_effect(tok_a: Tokenizer, tok_b: Tokenizer, texts: list[evaluate.Text], *, top: int = 10) -> dict[str, Any]:
    """Both tokenizers measured on each text (evaluate.Text, read by evaluate.read_texts)."""
    files = []
    words: Counter[str] = Counter()
    for t in texts:
        ma, mb = evaluate.measure(tok_a, t), evaluate.measure(tok_b, t)
        files.append(
            {
                "file": t.name,
                "bytes": t.bytes,
                "characters": t.characters,
                "a": ma,
                "b": mb,
                "delta": evaluate.deltas(ma, mb),
            }
        )
        words.update(t.text.split())
    distinct = list(words)
    seg_a, seg_b = tok_a.encode_ordinary_batch(distinct), tok_b.encode_ordinary_batch(distinct)
    changed = [
        (words[w], w, sa, sb) for w, sa, sb in zip(distinct, seg_a, seg_b) if _pieces(tok_a, sa) != _pieces(tok_b, sb)
    ]
    changed.sort(key=lambda x: (-x[0], x[1]))
    return {
        "files": files,
        "words": {
            "distinct": len(distinct),
            "occurrences": sum(words.values()),
            "changed_distinct": len(changed),
            "changed_occurrences": sum(c[0] for c in changed),
        },
        "top_changed": [
            {"word": w, "count": c, "a": _pieces(tok_a, sa), "b": _pieces(tok_b, sb)} for c, w, sa, sb in changed[:top]
        ],
    }


def _pieces(tok: Tokenizer, ids: list[int]) -> list[str]:
    return [show(tok.token_bytes(i)) for i in ids]
