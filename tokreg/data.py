"""The plain data of a tokenizer version, as trainers and importers produce it and as the
store reads it back: tokens, merges, training rounds, config and run.

A trainer or importer returns a `TokenizerData`; the store's writer records it in one
transaction; `Tokenizer` compiles its canonical content (content.py) into the core's encoder.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter
from typing import Any, Optional

from . import content as _content_format
from .content import digest, serialize


@dataclass(frozen=True)
class TokenRow:
    id: int
    bytes: bytes
    kind: str  # byte | char | merged | special | normal | unknown | control | user_defined | unused
    count: Optional[int] = None  # uses in the final segmentation of the training corpus
    score: Optional[float] = None

    @property
    def text(self) -> Optional[str]:
        """The readable form: None when the bytes are not UTF-8 on their own, or hold a NUL
        (which PostgreSQL text cannot store; the bytes column always has the exact token)."""
        if b"\x00" in self.bytes:
            return None
        try:
            return self.bytes.decode("utf-8")
        except UnicodeDecodeError:
            return None


#: What makes a token's `text` None, once its bytes are decoded with "surrogateescape": a NUL,
#: or a byte that is not UTF-8 (decoded as a lone surrogate; real UTF-8 never decodes to one).
_NOT_TEXT = re.compile("[\x00\udc80-\udcff]")


def texts(tokens: Sequence[TokenRow]) -> list[Optional[str]]:
    """`[t.text for t in tokens]`, a third of the time for 200k tokens: decoding never fails
    (an undecodable byte becomes a lone surrogate) and one regex call per token finds the
    texts that are None, instead of a Python call and a caught exception per token."""
    strs = list(map(bytes.decode, map(attrgetter("bytes"), tokens), repeat("utf-8"), repeat("surrogateescape")))
    return [None if bad else s for s, bad in zip(strs, map(_NOT_TEXT.search, strs))]


@dataclass(frozen=True)
class MergeRow:
    rank: int
    left: int
    right: int
    result: int
    count: Optional[int] = None  # pair count when the merge was chosen
    score: Optional[float] = None
    left_count: Optional[int] = None  # WordPiece: the part counts behind the score
    right_count: Optional[int] = None


@dataclass(frozen=True)
class RoundRow:
    round: int
    phase: str  # em | prune | final
    vocab_size: int
    log_likelihood: Optional[float] = None


@dataclass
class TokenizerData:
    algorithm: str  # the stored algorithm: bpe | wordpiece | unigram
    config: dict[str, Any]  # everything besides tokens and merges that changes encoding
    tokens: list[TokenRow]  # in id order
    merges: list[MergeRow] = field(default_factory=list)  # in rank order
    run: Optional[dict[str, Any]] = None  # the training run, when trained
    rounds: list[RoundRow] = field(default_factory=list)  # Unigram: EM / prune history
    source: str = "train"
    # Where it came from, when derived from a version (`store/lineage.py`): {"parent_ref",
    # "parent_hash", "derivation", "details"}; None: trained or imported from outside.
    lineage: Optional[dict[str, Any]] = None
    # The content, once made (hashing, compiling and recording all need it; for a 200k-token
    # version making it is a noticeable part of recording). Keyed by what it is made from.
    _content: Optional[tuple[tuple[int, int, str], bytes]] = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def from_content(cls, raw: bytes, source: str = "content") -> TokenizerData:
        """The tokens and merges of hash-checked canonical content (no counts, no run)."""
        algorithm, config = _content_format.header(raw)
        tokens, merges = _content_format.rows(raw)
        return cls(
            algorithm,
            config,
            [TokenRow(tid, b, kind, score=score) for tid, kind, b, score in tokens],
            [MergeRow(rank, *m) for rank, m in enumerate(merges)],
            source=source,
        )

    def content(self) -> bytes:
        """The canonical content bytes (content.py): what the hash is computed over and what
        an encoder is compiled from."""
        key = (len(self.tokens), len(self.merges), self.algorithm + repr(self.config))
        if self._content is not None and self._content[0] == key:
            return self._content[1]
        raw = serialize(
            self.algorithm,
            self.config,
            ((t.id, t.kind, t.bytes, t.score) for t in self.tokens),
            [(m.left, m.right, m.result) for m in self.merges],
        )
        self._content = (key, raw)
        return raw

    def hashes(self) -> tuple[str, str]:
        """(xxh3-128 label, sha256 label) of the canonical content."""
        return digest(self.content())

    @property
    def special_tokens(self) -> dict[str, int]:
        return {t.bytes.decode("utf-8"): t.id for t in self.tokens if t.kind == "special"}
