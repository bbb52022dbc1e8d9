"""SentencePiece BPE written as a Hugging Face `tokenizer.json` (`export --format hf`, `to_hf()`),
the way transformers' SentencePiece converters express it: HF's BPE model over the pieces (every
piece at its id, `byte_fallback`, the unknown piece with `fuse_unk`), merges derived from the
pieces, and SentencePiece's text handling as normalizers. Written only where that gives
SentencePiece's ids on every text; the rest is refused in one line saying why.

The merges: SentencePiece BPE joins, at each step, the adjacent pair whose joined text is the
piece of highest score (the leftmost such pair on a tie). Every split `left + right` of a normal
piece whose halves are normal pieces becomes a merge, ranked by the piece's score (then id), so
HF's lowest-rank-first rule picks the same piece at each step. Measured with sentencepiece 0.2
models trained on the shared corpora (1,000 to 8,000 pieces, with and without byte_fallback,
whitespace collapsed or kept): the converted file gave sentencepiece's ids on all 110,381 lines.

The text handling (no normalization rules, spaces escaped as ▁): with whitespace collapsing,
spaces trimmed at both ends and runs of them made one (`Replace`), spaces as ▁, the dummy ▁ in
front (`Prepend`, which leaves an empty text empty), then trailing ▁ dropped, literal ones
included, as SentencePiece drops them after escaping. User-defined pieces are cut out after
normalization (`Split`, isolated) and found whole through `ignore_merges`, which is exact only
when every normal piece is what SentencePiece's own merging makes of its text (checked here).

Refused: normalization rules (a `precompiled_charsmap`: HF's `Precompiled` applies them one
grapheme at a time, SentencePiece by longest match across characters, so text with combining
marks normalizes differently: tests/test_sentencepiece_bpe_hf.py measures it), a denormalizer
(HF has no step that rewrites decoded text), and spaces not escaped as ▁.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Optional

from ...data import TokenizerData, TokenRow
from ...errors import InputError
from ...formats import hf_json
from .. import template
from ..interfaces import HfCodec
from .sp_model import SENTENCEPIECE

MARK = "\u2581"


def merges(normal: list[TokenRow]) -> list[tuple[str, str]]:
    """The merge list of the normal pieces: each split of a piece into two normal pieces,
    ranked by the piece's score (highest first), then its id, then the split's position."""
    rank = {t.bytes.decode("utf-8"): (-(t.score or 0.0), t.id) for t in normal}
    ranked = []
    for piece, key in rank.items():
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in rank and right in rank:
                ranked.append((key, cut, left, right))
    return [(left, right) for _, _, left, right in sorted(ranked)]


def sentencepiece_merge(text: str, score: Mapping[str, float]) -> list[str]:
    """SentencePiece BPE's merging of `text`'s characters: join the adjacent pair whose text is
    the piece of highest score, the leftmost on a tie, until no pair is a piece."""
    symbols = list(text)
    while True:
        best: Optional[tuple[float, int]] = None
        for i in range(len(symbols) - 1):
            s = score.get(symbols[i] + symbols[i + 1])
            if s is not None and (best is None or s > best[0]):
                best = (s, i)
        if best is None:
            return symbols
        i = best[1]
        symbols[i : i + 2] = [symbols[i] + symbols[i + 1]]


def _normalizer(collapse: bool, dummy_prefix: bool) -> dict[str, Any]:
    steps: list[dict[str, Any]] = []
    if collapse:
        steps += [
            {"type": "Replace", "pattern": {"Regex": r"\A +| +\z"}, "content": ""},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
        ]
    steps.append({"type": "Replace", "pattern": {"String": " "}, "content": MARK})
    if dummy_prefix:
        steps.append({"type": "Prepend", "prepend": MARK})
    if collapse:
        steps.append({"type": "Replace", "pattern": {"Regex": f"{MARK}+\\z"}, "content": ""})
    return {"type": "Sequence", "normalizers": steps}


def _decoder(byte_fallback: bool, dummy_prefix: bool) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [{"type": "Replace", "pattern": {"String": MARK}, "content": " "}]
    if byte_fallback:
        steps.append({"type": "ByteFallback"})
    steps.append({"type": "Fuse"})
    if dummy_prefix:
        steps.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    return {"type": "Sequence", "decoders": steps}


class SpBpeHf(HfCodec):
    """Writes only: a tokenizer.json of this shape is read by the BPE codecs (as an HF pipeline)."""

    def reads(self, model_type: str, doc: Mapping[str, Any]) -> bool:
        return False

    def read(self, doc: Mapping[str, Any], model: Mapping[str, Any], where: str) -> TokenizerData:
        raise InputError(f"{where}: not read as SentencePiece BPE")  # reads() is never true

    def write(self, data: TokenizerData, ref: str) -> bytes:
        cfg = SENTENCEPIECE.parse_config(data.config)
        norm = cfg.normalizer

        def refuse(why: str) -> InputError:
            return InputError(f"{ref}: SentencePiece BPE cannot be written as hf exactly: {why}")

        if norm.charsmap:
            raise refuse(
                f"its normalization rules ({norm.name}) would run as HF's Precompiled, which rewrites one grapheme "
                "at a time where SentencePiece matches the longest rule across characters, so text with combining "
                "marks gets other ids; export it with --format sentencepiece"
            )
        if norm.denormalizer is not None:
            raise refuse("HF's decoders cannot apply its denormalization rules; export it with --format sentencepiece")
        if not norm.escape_whitespaces:
            raise refuse("it keeps spaces unescaped, which HF's SentencePiece layout cannot express")
        normal = [t for t in data.tokens if t.kind == "normal"]
        user = [t.bytes.decode("utf-8") for t in data.tokens if t.kind == "user_defined"]
        if user:
            score = {t.bytes.decode("utf-8"): t.score or 0.0 for t in normal}
            for piece in score:
                if sentencepiece_merge(piece, score) != [piece]:
                    raise refuse(
                        f"it has user-defined pieces, which HF finds whole only with ignore_merges, and then it "
                        f"would also give the piece {piece[:40]!r} for that text, which SentencePiece's merging "
                        "never makes; export it with --format sentencepiece"
                    )
        # The core matches the control pieces and the unknown one in text (allowed_special).
        specials = [(t.id, t.bytes.decode("utf-8")) for t in data.tokens if t.kind in ("control", "unknown")]
        vocab = {t.bytes.decode("utf-8"): t.id for t in data.tokens}
        pre: Optional[dict[str, Any]] = None
        if user:
            pattern = "|".join(re.escape(u) for u in sorted(user, key=len, reverse=True))
            pre = {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}
        doc = hf_json.document(
            specials,
            normalizer=_normalizer(norm.remove_extra_whitespaces, norm.add_dummy_prefix),
            pre_tokenizer=pre,
            post_processor=template.hf_for(data),
            decoder=_decoder(cfg.byte_fallback, norm.add_dummy_prefix),
            model={
                "type": "BPE",
                "dropout": None,
                "unk_token": cfg.unk_token,
                "continuing_subword_prefix": None,
                "end_of_word_suffix": None,
                "fuse_unk": True,
                "byte_fallback": cfg.byte_fallback,
                "ignore_merges": bool(user),
                "vocab": vocab,
                "merges": [list(m) for m in merges(normal)],
            },
        )
        return hf_json.dumps(doc)
