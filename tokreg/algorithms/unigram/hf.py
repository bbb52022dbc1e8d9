"""Hugging Face `tokenizer.json` for Unigram, read in two ways:

- the form that SentencePiece's text handling reproduces (Prepend + Replace normalizers, no
  pre-tokenizer): read into a SentencePiece-style version, as before, so these versions keep
  their hashes; such versions are never written, since HF's Unigram cannot give SentencePiece's
  ids on every text (`UnigramHf.write` says why);
- every other layout whose steps tokreg implements (the converters' `Precompiled` + `Strip` +
  `Replace`, `Metaspace` with any scheme, ALBERT's NFKD + StripAccents + Lowercase...): read
  into a version that keeps the file's pipeline (config "hf_pipeline", ../hf_pipeline.py) and
  runs HF's own Unigram arithmetic. These are written back as they came, with the same ids.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from typing import Any

from ...data import TokenizerData, TokenRow
from ...errors import InputError
from ...formats import hf_json
from .. import template
from ..hf_pipeline import HfPipeline
from ..interfaces import HfCodec
from ..sentencepiece_text import UNK_SURFACE, SpNormalizerConfig
from .model import UNIGRAM, UnigramConfig

# The normalizers HF writes SentencePiece models with: a ▁ in front (`Prepend`) and spaces as ▁
# (`Replace`). HF's `Metaspace` pre-tokenizer would skip the ▁ when the text already starts with a
# space; SentencePiece never does. Whitespace collapsing, when used, comes first.
_COLLAPSE = [
    {"type": "Replace", "pattern": {"Regex": "^ +| +$"}, "content": ""},
    {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
]
_PREPEND = {"type": "Prepend", "prepend": "\u2581"}
_SPACES = {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}


def _hf_normalizers(collapse: bool, dummy_prefix: bool) -> list[dict[str, Any]]:
    return (_COLLAPSE if collapse else []) + ([_PREPEND] if dummy_prefix else []) + [_SPACES]


class UnigramHf(HfCodec):
    writes = False

    def write(self, data: TokenizerData, ref: str) -> bytes:
        """A version that keeps an HF pipeline is written with it (`_write_pipeline`). The
        others are refused: HF cannot give tokreg's (SentencePiece's) ids for every text. Its
        Unigram adds the scores along a path in double precision, SentencePiece in single, and where two
        segmentations are equally likely (the same pieces in another order, as in a run like
        '------', or within a float's rounding) the roundings pick different winners: a trained
        3000-piece version differed on 37 of the 110,378 lines of the shared corpora. No choice
        of scores fixes it (a reordering has the same sum), so the file would be silently wrong."""
        cfg = UNIGRAM.parse_config(data.config)
        if cfg.hf is not None:
            return _write_pipeline(data, cfg, cfg.hf)
        raise InputError(
            f"{ref}: Unigram cannot be written as hf exactly: Hugging Face's Unigram adds piece scores in double "
            "precision where SentencePiece (and tokreg) add them in single, so equally likely segmentations (the "
            "same pieces in another order, as in runs like '------') come out differently; export it with "
            "--format sentencepiece or tokreg"
        )

    def reads(self, model_type: str, doc: Mapping[str, Any]) -> bool:
        return model_type == "Unigram"

    def read(self, doc: Mapping[str, Any], model: Mapping[str, Any], where: str) -> TokenizerData:
        """The SentencePiece-style form when the file has it (so these imports keep their
        hashes), else the file's own pipeline, refused in one line if a step is not one tokreg
        implements."""

        def refuse(what: str) -> InputError:
            return InputError(f"{where}: {what} is not supported by tokreg's Unigram (nothing was imported)")

        norm = doc.get("normalizer")
        steps = norm.get("normalizers") if isinstance(norm, dict) and norm.get("type") == "Sequence" else None
        forms = {(c, p): _hf_normalizers(c, p) for c in (False, True) for p in (False, True)}
        found = next((key for key, value in forms.items() if value == steps), None)
        pipeline = None
        if found is None or doc.get("pre_tokenizer") is not None:
            pipeline = HfPipeline.read(doc, where)
            collapse, dummy_prefix = False, False
        else:
            collapse, dummy_prefix = found
        vocab = model.get("vocab")
        if not isinstance(vocab, list) or not vocab:
            raise InputError(f"{where}: the Unigram model has no vocab")
        for i, v in enumerate(vocab):
            if not (isinstance(v, list) and len(v) == 2 and isinstance(v[0], str)):
                raise InputError(f"{where}: the Unigram vocab is not a list of [piece, score] (entry {i})")
            score = v[1]
            # abs() < max float, not isfinite(): an int too large for a float raises OverflowError.
            if not isinstance(score, (int, float)) or isinstance(score, bool) or not abs(score) < sys.float_info.max:
                raise InputError(
                    f"{where}: the Unigram piece {v[0][:40]!r} has the score {score!r:.30}, not a finite number"
                )
            if not v[0]:
                raise InputError(f"{where}: the Unigram vocab has an empty piece (id {i}); remove it")
        unk_id = model.get("unk_id")
        if not isinstance(unk_id, int) or isinstance(unk_id, bool) or not 0 <= unk_id < len(vocab):
            raise refuse("a Unigram model without an unknown piece")
        byte_fallback = model.get("byte_fallback", False)
        if not isinstance(byte_fallback, bool):
            raise InputError(f"{where}: byte_fallback is {byte_fallback!r:.20}, not true or false")
        added = hf_json.read_added(doc, where, normalized_ok=False)
        if pipeline is not None:
            pipeline = dataclasses.replace(pipeline, unk_added=unk_id in added)
        if any(i >= len(vocab) or vocab[i][0] != t for i, t in added.items()):
            raise InputError(f"{where}: an added token is not in the vocab with its id; the file is damaged")
        specials = set(added.values())

        def kind(i: int, piece: str) -> str:
            if i == unk_id:
                return "unknown"
            if piece in specials:
                return "control"
            if byte_fallback and len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
                return "byte"
            return "normal"

        tokens = [
            TokenRow(id=i, bytes=p.encode("utf-8"), kind=kind(i, p), score=float(s)) for i, (p, s) in enumerate(vocab)
        ]
        n_bytes = sum(1 for t in tokens if t.kind == "byte")
        if byte_fallback and n_bytes != 256 and pipeline is None:
            # HF turns a character with a missing byte piece into one unknown token, SentencePiece
            # (and tokreg) only that byte: a partial set would encode differently.
            raise InputError(f"{where}: byte_fallback is on but the vocab has {n_bytes} byte pieces, not 256")
        if pipeline is not None:
            # The SentencePiece normalizer is unused: HF's steps run instead.
            normalizer = SpNormalizerConfig(add_dummy_prefix=False, escape_whitespaces=False)
            if byte_fallback and "ByteFallback" not in [d["type"] for d in pipeline.decoder or ()]:
                raise refuse("byte_fallback without a ByteFallback decoder")
        else:
            normalizer = SpNormalizerConfig(add_dummy_prefix=dummy_prefix, remove_extra_whitespaces=collapse)
        # HF's decoders write the unknown piece's own text where SentencePiece writes ` ⁇ `: the
        # SentencePiece-style form keeps the file's (config "unk_surface", stored as it differs).
        surface = vocab[unk_id][0] if pipeline is None else UNK_SURFACE
        config = UnigramConfig(normalizer, byte_fallback, vocab[unk_id][0], hf=pipeline, unk_surface=surface)
        return TokenizerData(algorithm="unigram", config=config.to_json(), tokens=tokens, source="import:hf")


def _write_pipeline(data: TokenizerData, cfg: UnigramConfig, pipeline: HfPipeline) -> bytes:
    """The tokenizer.json of a version that keeps its HF pipeline: the steps as stored, the
    vocabulary with its scores, the specials as added tokens at their ids."""
    unk = next(t.id for t in data.tokens if t.kind == "unknown")
    added = ("control", "unknown") if pipeline.unk_added else ("control",)
    specials = [(t.id, t.bytes.decode("utf-8")) for t in data.tokens if t.kind in added]
    doc = hf_json.document(
        specials,
        **pipeline.to_hf(),
        post_processor=template.hf_for(data),
        model={
            "type": "Unigram",
            "unk_id": unk,
            "vocab": [[t.bytes.decode("utf-8"), t.score if t.score is not None else 0.0] for t in data.tokens],
            "byte_fallback": cfg.byte_fallback,
        },
    )
    return hf_json.dumps(doc)
