"""tiktoken's rank files for byte-level BPE, both ways: a `.tiktoken` rank map (token bytes ->
rank = id) read with its pattern and special tokens, the merge list recovered from the ranks;
and a version's ordinary tokens written as one. The file format itself is
formats/tiktoken_file.py."""

from __future__ import annotations

from typing import Optional

from ... import _core, patterns
from ...data import MergeRow, TokenizerData, TokenRow
from ...errors import InputError
from ...formats import tiktoken_file
from ..interfaces import TiktokenCodec
from .model import ByteBpeConfig


class TiktokenRanks(TiktokenCodec):
    def read(
        self, ranks: dict[bytes, int], where: str, *, pattern: str, specials: Optional[dict[str, int]] = None
    ) -> TokenizerData:
        """Each token is split by the merges of lower rank to recover the merge list, so an
        imported vocabulary is stored, queried and diffed like a trained one. Ranks may leave
        gaps (ids are kept, never renumbered: they are the ids a model was trained with), and
        one token may be empty (kind "merged", made by no merge; it decodes to nothing and no
        text encodes to it, as in tiktoken)."""
        _, regex = patterns.resolve(pattern)
        specials = dict(specials or {})
        taken = set(ranks.values())
        for s, i in specials.items():
            if i in taken:
                raise InputError(
                    f"{where}: special token {s!r} has id {i}, which is already the rank of an ordinary token; "
                    "give it a free id (nothing was imported)"
                )
        ordinary = sorted((r, t) for t, r in ranks.items())
        try:
            recovered = _core.merges_from_ranks(ordinary)
        except InputError as e:
            raise InputError(f"{where}: not a usable byte-level vocabulary: {e}") from None
        rows = [TokenRow(id=r, bytes=t, kind="byte" if len(t) == 1 else "merged") for r, t in ordinary]
        rows += [TokenRow(id=i, bytes=s.encode("utf-8"), kind="special") for s, i in specials.items()]
        rows.sort(key=lambda t: t.id)
        merges = [MergeRow(rank=k, left=a, right=b, result=z) for k, (a, b, z) in enumerate(recovered)]
        return TokenizerData(
            algorithm="bpe",
            config=ByteBpeConfig(regex).to_json(),
            tokens=rows,
            merges=merges,
            source="import:tiktoken",
        )

    def write(self, data: TokenizerData, ref: str) -> bytes:
        return tiktoken_file.dumps([(t.id, t.bytes) for t in data.tokens if t.kind != "special"])
