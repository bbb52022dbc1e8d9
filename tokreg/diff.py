"""`tokreg diff A B`: how two versions differ, as plain data (the CLI renders it).

Tokens are matched by their bytes, never by id, so a token that moved ids is still "common".
Merges are matched by the bytes of (left, right). What is compared depends on what both
versions have: every version has tokens and a config; merges are compared when both have
merges (BPE, WordPiece), scores when both have scores (Unigram log probabilities).

With texts (`--text FILE`), both versions encode the same text: tokens per byte for each,
how many words (whitespace-separated, each encoded on its own) segment differently, and the
most frequent of those with both segmentations.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Optional

from sqlalchemy import Connection

from .errors import InputError
from .versions import VersionInfo, load_rows, resolve

Rows = tuple[list[tuple[int, bytes, str, Optional[float]]], list[tuple[int, int, int]]]


def show(raw: bytes) -> str:
    """A token for people: its text, or its bytes escaped when they are not UTF-8 on their own."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(chr(b) if 32 <= b < 127 else f"\\x{b:02x}" for b in raw)


def diff(conn: Connection, a_ref: str, b_ref: str, *, top: int = 10) -> dict[str, Any]:
    a, b = resolve(conn, a_ref), resolve(conn, b_ref)
    ra, rb = load_rows(conn, a.id), load_rows(conn, b.id)
    out: dict[str, Any] = {
        "a": _head(a),
        "b": _head(b),
        "vocab_size": {"a": len(ra[0]), "b": len(rb[0]), "delta": len(rb[0]) - len(ra[0])},
        "tokens": _tokens(ra, rb, top),
        "config": _config(a, b, ra, rb),
    }
    if ra[1] and rb[1]:
        out["merges"] = _merges(ra, rb, top)
    if _scored(ra) and _scored(rb):
        out["scores"] = _scores(ra, rb, top)
    return out


def _head(v: VersionInfo) -> dict[str, Any]:
    return {
        "ref": v.ref,
        "hash": v.content_hash,
        "algorithm": v.algorithm,
        "byte_level": bool(v.config.get("byte_level", False)),
    }


def _by_bytes(rows: Rows) -> dict[bytes, int]:
    return {raw: tid for tid, raw, kind, _ in rows[0] if kind != "special"}


def _tokens(ra: Rows, rb: Rows, top: int) -> dict[str, Any]:
    ta, tb = _by_bytes(ra), _by_bytes(rb)
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


def _pairs(rows: Rows) -> list[tuple[bytes, bytes]]:
    raw = {tid: r for tid, r, _, _ in rows[0]}
    return [(raw[left], raw[right]) for left, right, _ in rows[1]]


def _merges(ra: Rows, rb: Rows, top: int) -> dict[str, Any]:
    pa, pb = _pairs(ra), _pairs(rb)
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
        "largest_reranks": [
            {"merge": _merge_text(p), "rank_a": ra_, "rank_b": rb_} for _, ra_, rb_, p in moved[:top]
        ],
    }


def _merge_text(p: tuple[bytes, bytes]) -> str:
    return f"{show(p[0])} + {show(p[1])}"


def _scored(rows: Rows) -> bool:
    return any(s is not None for _, _, kind, s in rows[0] if kind != "special")


def _scores(ra: Rows, rb: Rows, top: int) -> dict[str, Any]:
    sa = {raw: s for _, raw, kind, s in ra[0] if s is not None and kind != "special"}
    sb = {raw: s for _, raw, kind, s in rb[0] if s is not None and kind != "special"}
    changes = sorted(((sb[t] - s, t) for t, s in sa.items() if t in sb), key=lambda x: -abs(x[0]))
    return {
        "common": len(changes),
        "largest_changes": [{"token": show(t), "a": sa[t], "b": sb[t], "delta": d} for d, t in changes[:top]],
    }


def _config(a: VersionInfo, b: VersionInfo, ra: Rows, rb: Rows) -> dict[str, Any]:
    ca = {"algorithm": a.algorithm, **a.config}
    cb = {"algorithm": b.algorithm, **b.config}
    changed = {
        k: {"a": ca.get(k), "b": cb.get(k)} for k in sorted(set(ca) | set(cb)) if ca.get(k) != cb.get(k)
    }
    spa = {show(r): i for i, r, kind, _ in ra[0] if kind == "special"}
    spb = {show(r): i for i, r, kind, _ in rb[0] if kind == "special"}
    return {
        "changed": changed,
        "special_tokens": {
            "added": sorted(set(spb) - set(spa)),
            "removed": sorted(set(spa) - set(spb)),
            "id_changed": {
                s: {"a": spa[s], "b": spb[s]} for s in sorted(set(spa) & set(spb)) if spa[s] != spb[s]
            },
        },
    }


# -- the effect on real text -------------------------------------------------------------------------


def text_effect(tok_a: Any, tok_b: Any, texts: list[tuple[str, str]], *, top: int = 10) -> dict[str, Any]:
    """`texts`: (label, text). Both tokenizers must be able to encode them."""
    files = []
    words: Counter[str] = Counter()
    for label, text in texts:
        n_bytes = len(text.encode("utf-8"))
        na, nb = (sum(len(x) for x in t.encode_batch(_chunks(text))) for t in (tok_a, tok_b))
        files.append(
            {
                "file": label,
                "bytes": n_bytes,
                "tokens_a": na,
                "tokens_b": nb,
                "tokens_per_byte_a": na / n_bytes if n_bytes else 0.0,
                "tokens_per_byte_b": nb / n_bytes if n_bytes else 0.0,
            }
        )
        words.update(text.split())
    distinct = list(words)
    seg_a, seg_b = tok_a.encode_batch(distinct), tok_b.encode_batch(distinct)
    changed = [
        (words[w], w, sa, sb)
        for w, sa, sb in zip(distinct, seg_a, seg_b)
        if _pieces(tok_a, sa) != _pieces(tok_b, sb)
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
            {"word": w, "count": c, "a": _pieces(tok_a, sa), "b": _pieces(tok_b, sb)}
            for c, w, sa, sb in changed[:top]
        ],
    }


def _pieces(tok: Any, ids: list[int]) -> list[str]:
    return [show(tok.token_bytes(i)) for i in ids]


def _chunks(text: str, lines: int = 500) -> list[str]:
    # Whole lines per chunk: pieces never cross a chunk, and the encoder runs them in parallel.
    rows = text.splitlines(keepends=True)
    return ["".join(rows[i : i + lines]) for i in range(0, len(rows), lines)] or [""]


def read_texts(paths: list[str]) -> list[tuple[str, str]]:
    out = []
    for p in paths:
        try:
            with open(p, encoding="utf-8") as fh:
                out.append((p, fh.read()))
        except FileNotFoundError:
            raise InputError(f"--text file {p!r} does not exist; check the path") from None
        except UnicodeDecodeError as e:
            raise InputError(f"--text file {p!r} is not UTF-8 at byte {e.start}") from None
        except OSError as e:
            raise InputError(f"cannot read --text file {p!r}: {e.strerror}") from None
    return out


def compare(
    registry: Any, a_ref: str, b_ref: str, *, texts: Optional[list[str]] = None, top: int = 10
) -> dict[str, Any]:
    """`diff` of two refs in `registry`, plus `text_effect` on the files in `texts`."""
    with registry.engine.connect() as conn:
        out = diff(conn, a_ref, b_ref, top=top)
    if texts:
        loaded = read_texts(texts)
        out["text"] = text_effect(
            registry.load(out["a"]["ref"]), registry.load(out["b"]["ref"]), loaded, top=top
        )
    return out
