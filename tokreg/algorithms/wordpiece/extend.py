"""Growing a WordPiece version, ids kept: the merges continued on a new corpus' words as the
base segments them (`wordpiece::extend` in the core), ranked by the objective the caller
passes (the base's own: training.py says what each ranks by), and vocabulary entries added.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from ... import _core
from ...data import MergeRow, TokenizerData, TokenRow
from ..interfaces import Extender
from ..options import Progress
from .model import WORDPIECE, WordPieceConfig, token_kind
from .training import DEFAULT_OBJECTIVE, OBJECTIVES


class WordPieceExtender(Extender[WordPieceConfig]):
    objectives = OBJECTIVES

    def counting(self, config: WordPieceConfig) -> dict[str, Any]:
        return {"splitting": "bert", "normalizer": config.normalizer.to_json(), "max_piece_bytes": 0}

    def extend(
        self,
        base: TokenizerData,
        counts: _core.Counts,
        add: int,
        *,
        keep: Sequence[bytes] = (),
        threads: int = 0,
        progress: Optional[Progress] = None,
        objective: Optional[str] = None,
    ) -> TokenizerData:
        """Continues the WordPiece merges on the new corpus' words as the base segments them
        (greedy longest match, which is the state the base's own merges leave a word in),
        after first adding the characters the base lacks (`wordpiece::extend` in the core),
        ranked by `objective` (None: the default objective of training).
        A version imported from a bare vocab.txt has no merges, and extends the same way."""
        config = WORDPIECE.parse_config(base.config)
        by_id = {t.id: t for t in base.tokens}
        vocab = [
            by_id[i].bytes.decode("utf-8") if i in by_id and by_id[i].kind != "special" else ""
            for i in range(max(by_id) + 1)
        ]
        out = _core.extend_wordpiece(
            vocab,
            counts,
            add,
            continuing_prefix=config.continuing_prefix,
            max_chars=config.max_input_chars_per_word,
            keep=[k.decode("utf-8", "replace") for k in keep],
            threads=threads,
            progress=progress,
            objective=objective or DEFAULT_OBJECTIVE,
        )
        first = out.first_new
        tokens_out = out.tokens  # each read of a result's list makes it anew: once
        chars_end = first + out.new_symbols
        rows = [
            TokenRow(
                id=t.id,
                bytes=t.bytes,
                kind=t.kind,
                count=None if t.kind == "special" else tokens_out[t.id][1],
                score=t.score,
            )
            for t in base.tokens
        ]
        rows += [
            TokenRow(id=i, bytes=text.encode("utf-8"), kind="char" if i < chars_end else "merged", count=count)
            for i, (text, count) in enumerate(tokens_out[first:], start=first)
        ]
        start = len(base.merges)
        merges = list(base.merges) + [
            MergeRow(rank=start + k, left=a, right=b, result=z, count=pc, score=sc, left_count=lc, right_count=rc)
            for k, (a, b, z, sc, pc, lc, rc) in enumerate(out.merges)
        ]
        return TokenizerData(algorithm=base.algorithm, config=dict(base.config), tokens=rows, merges=merges)

    def add_tokens(self, base: TokenizerData, tokens: Sequence[str]) -> TokenizerData:
        """Vocabulary entries after the base's (greedy longest match finds them); a token that
        continues a word carries the prefix (`##ing`)."""
        config = WORDPIECE.parse_config(base.config)
        first = max(t.id for t in base.tokens) + 1
        new = [
            TokenRow(id=first + i, bytes=t.encode("utf-8"), kind=token_kind(t, config.continuing_prefix, set()))
            for i, t in enumerate(tokens)
        ]
        return TokenizerData(
            algorithm=base.algorithm, config=dict(base.config), tokens=list(base.tokens) + new, merges=list(base.merges)
        )
