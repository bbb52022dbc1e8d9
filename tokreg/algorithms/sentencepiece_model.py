"""SentencePiece `.model` files as versions, shared by the two SentencePiece-style algorithms
(Unigram and SentencePiece BPE): the pieces of a model as token rows, its normalizer as
sentencepiece_text.py's config, the settings tokreg refuses, and a version written back as a
`.model` (formats/sentencepiece_proto.py parses and writes the protobuf).
"""

from __future__ import annotations

import math

from ..data import TokenizerData, TokenRow
from ..errors import InputError
from ..formats.sentencepiece_proto import KINDS, MODEL_TYPES, Model, Piece, dumps
from .sentencepiece_text import Denormalizer, SpNormalizerConfig


def model_tokens(m: Model, source: str) -> tuple[list[TokenRow], str]:
    """Token rows in id order and the unknown piece's text; refuses what SentencePiece itself
    would refuse to load, and every setting whose encoding tokreg does not reproduce exactly."""
    rows: list[TokenRow] = []
    seen: dict[bytes, int] = {}
    unk: list[str] = []
    n_bytes = 0
    for i, p in enumerate(m.pieces):
        kind = KINDS.get(p.type)
        if kind is None:
            raise InputError(f"{source}: piece {i} has unknown type {p.type}; is this a SentencePiece .model file?")
        try:
            text = p.text.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{source}: piece {i} is not UTF-8; is this a SentencePiece .model file?") from None
        if not text or "\x00" in text:
            raise InputError(f"{source}: piece {i} is empty or holds a NUL; the model is damaged")
        if p.text in seen:
            raise InputError(
                f"{source}: piece {text!r} appears twice (ids {seen[p.text]} and {i}); the model is damaged"
            )
        if not math.isfinite(p.score):
            raise InputError(f"{source}: piece {text!r} has the score {p.score}; the model is damaged")
        seen[p.text] = i
        if kind == "unknown":
            unk.append(text)
        if kind == "byte":
            n_bytes += 1
        # + 0.0 turns -0.0 (SentencePiece BPE's first piece) into 0.0: SQL stores no sign of zero
        rows.append(TokenRow(id=i, bytes=p.text, kind=kind, score=p.score + 0.0))
    if len(unk) != 1:
        raise InputError(
            f"{source}: a SentencePiece model has exactly one unknown piece, this one has {len(unk)}; "
            "is this a SentencePiece .model file?"
        )
    if m.byte_fallback and n_bytes != 256:
        raise InputError(f"{source}: byte_fallback is on but the model has {n_bytes} byte pieces, not 256")
    if n_bytes and not m.byte_fallback:
        raise InputError(f"{source}: the model has byte pieces but byte_fallback is off; the model is damaged")
    _refuse_unsupported(m, source)
    return rows, unk[0]


def model_normalizer(m: Model, source: str) -> SpNormalizerConfig:
    """The normalizer of a model as SentencePiece loads it: its rules are the model's
    precompiled_charsmap and nothing else (SentencePiece fills in a named rule's charsmap when it
    trains, never when it loads, so a model that names a rule but carries none normalizes as
    identity). Without rules the name is stored as "identity", as tokreg always stored it."""
    charsmap = m.precompiled_charsmap
    name = (m.normalizer_name or "user_defined") if charsmap else "identity"
    denormalizer = None
    if m.denormalizer_charsmap:
        denormalizer = Denormalizer(
            m.denormalizer_charsmap,
            m.denormalizer_add_dummy_prefix,
            m.denormalizer_remove_extra_whitespaces,
            m.denormalizer_escape_whitespaces,
        )
    return SpNormalizerConfig(
        add_dummy_prefix=m.add_dummy_prefix,
        remove_extra_whitespaces=m.remove_extra_whitespaces,
        escape_whitespaces=m.escape_whitespaces,
        name=name,
        charsmap=charsmap,
        denormalizer=denormalizer,
    )


def _refuse_unsupported(m: Model, source: str) -> None:
    if m.model_type not in (1, 2):
        kind = MODEL_TYPES.get(m.model_type, f"type {m.model_type}")
        raise InputError(
            f"{source}: SentencePiece {kind} models are not supported (only UNIGRAM and BPE); nothing was written"
        )
    if m.treat_whitespace_as_suffix:
        raise InputError(
            f"{source}: the model uses treat_whitespace_as_suffix, which tokreg does not implement; "
            "retrain it without. Nothing was written"
        )


def export_model(
    data: TokenizerData, normalizer: SpNormalizerConfig, byte_fallback: bool, model_type: int, unk_surface: str
) -> bytes:
    """A `.model` file of a version: its pieces in id order with their scores (as the f32 the
    format holds) and types, its normalizer and denormalizer, model_type, byte_fallback and
    unk_surface (what the unknown piece decodes to).

    SentencePiece BPE scores its pieces -rank, so its first learned piece has -0.0, which tokreg
    stores as 0.0 (SQL keeps no sign of zero); it is written back as -0.0 so that an imported
    model comes back byte for byte (the sign changes nothing in encoding)."""
    types = {kind: number for number, kind in KINDS.items()}

    def score(t: TokenRow) -> float:
        s = t.score if t.score is not None else 0.0
        return -0.0 if model_type == 2 and t.kind == "normal" and s == 0.0 else s

    pieces = [Piece(t.bytes, score(t), types[t.kind]) for t in data.tokens]
    d = normalizer.denormalizer
    m = Model(
        pieces=pieces,
        model_type=model_type,
        byte_fallback=byte_fallback,
        normalizer_name=normalizer.name,
        precompiled_charsmap=normalizer.charsmap,
        add_dummy_prefix=normalizer.add_dummy_prefix,
        remove_extra_whitespaces=normalizer.remove_extra_whitespaces,
        escape_whitespaces=normalizer.escape_whitespaces,
        unk_surface=unk_surface,
    )
    if d is not None:
        m.denormalizer_charsmap = d.charsmap
        m.denormalizer_add_dummy_prefix = d.add_dummy_prefix
        m.denormalizer_remove_extra_whitespaces = d.remove_extra_whitespaces
        m.denormalizer_escape_whitespaces = d.escape_whitespaces
    return dumps(m)
