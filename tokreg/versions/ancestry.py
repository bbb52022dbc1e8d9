"""A token's merge ancestry: the tree of merges that built it, down to base tokens.

Each node is a token; a token made by a merge has that merge (its rank, and the pair count,
and for WordPiece the score, at the moment it was chosen) and two children, the left and right
tokens it joined. Base tokens (bytes, characters, special tokens) and tokens of vocabularies
without merges (Unigram pieces) are leaves.

    >>> tree(260, merges, tokens).to_json()        # "the" in a byte-level BPE
    {"id": 260, "bytes": b"the", ..., "merge": {"rank": 3, ...},
     "children": [{"id": 116, "bytes": b"t", ...}, {"id": 258, "bytes": b"he", ..., "children": [...]}]}

`token_info` is what `Registry.token` returns: a token's row, its tree, and every version
holding the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from sqlalchemy import Connection

from ..data import JsonValue, MergeRow, TokenRow, VersionInfo
from ..errors import NotFoundError
from ..store import reads, refs

#: Nodes past this are cut (a tree of a 128-byte token has 255 at most; damaged rows may loop).
MAX_NODES = 2048


@dataclass(frozen=True)
class NodeMerge(JsonValue):
    """The merge that made a node's token, as it was when chosen."""

    rank: int
    count: Optional[int]
    score: Optional[float]
    left_count: Optional[int]  # WordPiece: the part counts behind the score
    right_count: Optional[int]


@dataclass(frozen=True)
class TokenNode(JsonValue):
    """A token of a tree: a leaf (no merge), or made by `merge` from its two children."""

    id: int
    bytes: bytes  # b"" for an id with no row
    text: Optional[str]
    kind: Optional[str]
    merge: Optional[NodeMerge]
    children: tuple[TokenNode, ...]  # (left, right), or () for a leaf


def tree(token_id: int, merges: dict[int, MergeRow], tokens: dict[int, TokenRow]) -> TokenNode:
    """The ancestry of `token_id`, from `merges` (result id -> merge) and `tokens` (id -> row)."""
    budget = [MAX_NODES]

    def node(i: int, path: frozenset[int]) -> TokenNode:
        budget[0] -= 1
        t = tokens.get(i)
        m = merges.get(i)
        leaf = m is None or i in path or budget[0] <= 0
        return TokenNode(
            id=i,
            bytes=t.bytes if t else b"",
            text=t.text if t else None,
            kind=t.kind if t else None,
            merge=None if m is None or leaf else NodeMerge(m.rank, m.count, m.score, m.left_count, m.right_count),
            children=() if m is None or leaf else (node(m.left, path | {i}), node(m.right, path | {i})),
        )

    return node(token_id, frozenset())


def needed_ids(merges: dict[int, MergeRow]) -> set[int]:
    """Every token id a tree over `merges` mentions."""
    return {i for m in merges.values() for i in (m.left, m.right, m.result)}


@dataclass(frozen=True)
class Holder(JsonValue):
    """A version holding a token with the same bytes, and that token's id there."""

    ref: str
    id: int
    same_id: bool


@dataclass(frozen=True)
class TokenInfo(JsonValue):
    """One token of a version (`Registry.token`): its row, its merge tree, how many merges the
    tree holds, and every version (this one included) holding a token with the same bytes."""

    version: VersionInfo
    token: TokenRow
    tree: TokenNode
    merges: int
    also_in: tuple[Holder, ...]


def token_info(conn: Connection, v: VersionInfo, token_id: int) -> TokenInfo:
    """Token `token_id` of `v` (resolved by the caller); NotFoundError when `v` has no such id."""
    row = reads.tokens_by_id(conn, v, {token_id}).get(token_id)
    if row is None:
        raise NotFoundError(f"{v.ref} has no token {token_id} (ids are 0..{v.vocab_size - 1})")
    merges = reads.merges_building(conn, v, token_id)
    parts = reads.tokens_by_id(conn, v, needed_ids(merges) | {token_id})
    versions = {x.id: x for x in refs.all_versions(conn)}
    holders = [(versions[vid], tid) for vid, tid in reads.holders_of(conn, row.bytes) if vid in versions]
    return TokenInfo(
        version=v,
        token=row,
        tree=tree(token_id, merges, parts),
        merges=len(merges),
        also_in=tuple(Holder(x.ref, tid, tid == token_id) for x, tid in holders),
    )
