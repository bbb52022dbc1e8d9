"""Growing a Unigram version, ids kept: new pieces learned from a new corpus by EM over the
base's pieces and candidates (the base's pieces fixed), and user-defined pieces added.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from ... import _core
from ...data import RoundRow, TokenizerData, TokenRow
from ...errors import InputError, VocabularySizeError
from ..interfaces import Extender
from ..options import Progress
from .model import UNIGRAM, UnigramConfig


class UnigramExtender(Extender[UnigramConfig]):
    def counting(self, config: UnigramConfig) -> dict[str, Any]:
        n = config.normalizer
        if not n.escape_whitespaces:
            raise InputError(f"this {UNIGRAM.title} model keeps spaces as spaces (no ▁), which tokreg cannot train on")
        normalizer = {"add_dummy_prefix": n.add_dummy_prefix, "remove_extra_whitespaces": n.remove_extra_whitespaces}
        return {"splitting": "sentencepiece", "normalizer": normalizer, "max_piece_bytes": 0}

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
        """New pieces from the new corpus (its characters the base lacks, and frequent
        substrings), scored by EM over base + candidates, pruned to `add`. The base's pieces are
        in the model from the start, are never pruned and keep their scores: EM re-estimates
        the new pieces only, so a text whose best segmentation uses no new piece segments
        exactly as before. New pieces take the ids after the base's, by score descending."""
        unk = next((t.bytes.decode("utf-8") for t in base.tokens if t.kind == "unknown"), "<unk>")
        learned = [(t.bytes.decode("utf-8"), float(t.score or 0.0)) for t in base.tokens if t.kind == "normal"]
        try:
            out = _core.train_unigram(
                counts,
                1 + add,
                unk_piece=unk,
                control_pieces=[],
                threads=threads,
                progress=progress,
                base=learned,
                keep=[k.decode("utf-8", "replace") for k in keep],
                # An extended version records no run to retrain from; what promises that the
                # same base, corpus and --add give the same hash is that extension keeps the
                # trainer's revision 1 (its counts carry no line ends for revision 2 to read).
                revision=1,
            )
        except VocabularySizeError as e:
            if e.reachable is not None:
                got = e.reachable - 1
                raise InputError(
                    f"the new corpus supports only {got:,} new pieces for this {UNIGRAM.title} model "
                    f"(asked --add {add:,}); nothing was written" + (f"; rerun with --add {got}" if got else "")
                ) from None
            raise InputError(
                f"the new corpus has {(e.needed or 1) - 1:,} characters the base lacks, each of which needs a piece; "
                f"--add must be at least that (nothing was written)"
            ) from None
        first = max(t.id for t in base.tokens) + 1
        new = [
            TokenRow(id=first + i, bytes=text.encode("utf-8"), kind=kind, score=score)
            for i, (text, score, kind) in enumerate(out.pieces[1:])
        ]
        rounds = [RoundRow(round=r, phase="em", vocab_size=n, log_likelihood=ll) for r, n, ll in out.rounds]
        return TokenizerData(
            algorithm=base.algorithm, config=dict(base.config), tokens=list(base.tokens) + new, rounds=rounds
        )

    def add_tokens(self, base: TokenizerData, tokens: Sequence[str]) -> TokenizerData:
        """User-defined pieces: matched wherever they occur (SentencePiece's rule), ids after the
        base's."""
        first = max(t.id for t in base.tokens) + 1
        new = [
            TokenRow(id=first + i, bytes=t.encode("utf-8"), kind="user_defined", score=0.0)
            for i, t in enumerate(tokens)
        ]
        return TokenizerData(algorithm=base.algorithm, config=dict(base.config), tokens=list(base.tokens) + new)
