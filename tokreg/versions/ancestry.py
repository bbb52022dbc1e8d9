"""A token's merge ancestry: the tree of merges that built it, down to base tokens.

Each node is a token; a token made by a merge has that merge (its rank, and the pair count,
and for WordPiece the score, at the moment it was chosen) and two children, the left and right
tokens it joined. Base tokens (bytes, characters, special tokens) and tokens of vocabularies
without merges (Unigram pieces) are leaves.

    >>> tree(260, merges, tokens)        # "the" in a byte-level BPE
    {"id": 260, "bytes": b"the", ..., "merge": {"rank": 3, ...},
     "children": [{"id": 116, "bytes": b"t", ...}, {"id": 258, "bytes": b"he", ..., "children": [...]}]}
"""

from __future__ import annotations

from typing import Any

from ..data import MergeRow, TokenRow

#: Nodes past this are cut (a tree of a 128-byte token has 255 at most; damaged rows may loop).
MAX_NODES = 2048


def tree(token_id: int, merges: dict[int, MergeRow], tokens: dict[int, TokenRow]) -> dict[str, Any]:
    """The ancestry of `token_id`, from `merges` (result id -> merge) and `tokens` (id -> row)."""
    budget = [MAX_NODES]

    def node(i: int, path: frozenset[int]) -> dict[str, Any]:
        budget[0] -= 1
        t = tokens.get(i)
        out: dict[str, Any] = {
            "id": i,
            "bytes": t.bytes if t else b"",
            "text": t.text if t else None,
            "kind": t.kind if t else None,
            "merge": None,
            "children": [],
        }
        m = merges.get(i)
        if m is None or i in path or budget[0] <= 0:
            return out
        out["merge"] = {
            "rank": m.rank,
            "count": m.count,
            "score": m.score,
            "left_count": m.left_count,
            "right_count": m.right_count,
        }
        out["children"] = [node(m.left, path | {i}), node(m.right, path | {i})]
        return out

    return node(token_id, frozenset())


def needed_ids(merges: dict[int, MergeRow]) -> set[int]:
    """Every token id a tree over `merges` mentions."""
    return {i for m in merges.values() for i in (m.left, m.right, m.result)}
