"""SentencePiece `.model` files: a serialized `ModelProto` (google/sentencepiece,
src/sentencepiece_model.proto). Owns a small protobuf wire-format reader for the fields that
change encoding, and the writer of exactly those fields (`dumps`); what they mean for tokreg
is algorithms/sentencepiece_model.py's business.

What is read (field numbers of the .proto):

    ModelProto      pieces=1 {piece=1, score=2 (float), type=3}, trainer_spec=2,
                    normalizer_spec=3, denormalizer_spec=5 (a NormalizerSpec)
    TrainerSpec     model_type=3, treat_whitespace_as_suffix=24, byte_fallback=35,
                    unk_surface=44 (what decoding writes for the unknown piece)
    NormalizerSpec  name=1, precompiled_charsmap=2, add_dummy_prefix=3,
                    remove_extra_whitespaces=4, escape_whitespaces=5

Every other field is skipped: the rest of TrainerSpec (split_digits, split_by_whitespace,
vocab_size, input files, ...) only steers training, not encoding, and so do NormalizerSpec's
normalization_rule_tsv (the rules' source, compiled into precompiled_charsmap) and
ModelProto's self_test_data. `dumps` writes what is read, in field-number order as
protobuf's own serializer does, so a model that carries nothing else comes back byte for byte.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Optional, Union

from ..errors import InputError
from ..files import read_input

#: TrainerSpec.unk_surface's default in the .proto: U+2047 between spaces.
DEFAULT_UNK_SURFACE = " \u2047 "

# ModelProto.SentencePiece.Type -> token kind
KINDS = {1: "normal", 2: "unknown", 3: "control", 4: "user_defined", 5: "unused", 6: "byte"}
MODEL_TYPES = {1: "UNIGRAM", 2: "BPE", 3: "WORD", 4: "CHAR"}

# -- protobuf wire format -----------------------------------------------------------------------

Value = Union[int, bytes]  # varint / fixed32 / fixed64 as int (raw bits), length-delimited as bytes


class _Malformed(Exception):
    """The bytes are not a well-formed protobuf message; str() says where."""


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    """(value, next position) of the base-128 varint at `pos`."""
    value = shift = 0
    while True:
        if pos >= len(buf):
            raise _Malformed(f"a number runs past the end at byte {pos}")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
        if shift >= 70:
            raise _Malformed(f"a number longer than 10 bytes at byte {pos}")


def _fields(buf: bytes) -> Iterator[tuple[int, int, Value]]:
    """(field number, wire type, value) of each field of one message, in file order."""
    pos, n = 0, len(buf)
    while pos < n:
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise _Malformed(f"field number 0 at byte {pos}")
        value: Value
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            if pos + size > n:
                raise _Malformed(f"a {size * 8}-bit field runs past the end at byte {pos}")
            value = int.from_bytes(buf[pos : pos + size], "little")
            pos += size
        elif wire == 2:
            size, pos = _varint(buf, pos)
            if pos + size > n:
                raise _Malformed(f"a {size}-byte field runs past the end at byte {pos}")
            value = buf[pos : pos + size]
            pos += size
        else:  # 3/4 are the deprecated groups, 6/7 do not exist; SentencePiece uses neither
            raise _Malformed(f"wire type {wire} at byte {pos}")
        yield number, wire, value


def _want(value: Value, wire: int, expected: int, what: str) -> Value:
    if wire != expected:
        raise _Malformed(f"{what} has wire type {wire}, expected {expected}")
    return value


def _int(value: Value, wire: int, what: str) -> int:
    v = _want(value, wire, 0, what)
    assert isinstance(v, int)
    return v


def _bytes(value: Value, wire: int, what: str) -> bytes:
    v = _want(value, wire, 2, what)
    assert isinstance(v, bytes)
    return v


# -- ModelProto ---------------------------------------------------------------------------------


@dataclass
class Piece:
    text: bytes
    score: float = 0.0
    type: int = 1  # NORMAL


@dataclass
class Model:
    """The fields of a ModelProto that change encoding, with the .proto's defaults."""

    pieces: list[Piece] = field(default_factory=list)
    model_type: int = 1  # UNIGRAM
    byte_fallback: bool = False
    treat_whitespace_as_suffix: bool = False
    unk_surface: str = DEFAULT_UNK_SURFACE
    normalizer_name: str = ""
    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True
    denormalizer_charsmap: bytes = b""
    #: trainer_spec.bos_id / eos_id (-1: none); they shape no encoding, only what add_bos adds
    bos_id: int = 1
    eos_id: int = 2
    # The denormalizer's flags, with the .proto's defaults (SentencePiece applies them on decode).
    denormalizer_add_dummy_prefix: bool = True
    denormalizer_remove_extra_whitespaces: bool = True
    denormalizer_escape_whitespaces: bool = True


def _piece(buf: bytes) -> Piece:
    p = Piece(b"")
    for number, wire, value in _fields(buf):
        if number == 1:
            p.text = _bytes(value, wire, "piece.piece")
        elif number == 2:
            bits = _want(value, wire, 5, "piece.score")
            assert isinstance(bits, int)
            p.score = struct.unpack("<f", bits.to_bytes(4, "little"))[0]
        elif number == 3:
            p.type = _int(value, wire, "piece.type")
    return p


def parse(raw: bytes) -> Model:
    """The encoding-relevant fields of a serialized ModelProto. Raises `_Malformed`."""
    m = Model()
    for number, wire, value in _fields(raw):
        if number == 1:
            m.pieces.append(_piece(_bytes(value, wire, "pieces")))
        elif number == 2:
            for n, w, v in _fields(_bytes(value, wire, "trainer_spec")):
                if n == 3:
                    m.model_type = _int(v, w, "trainer_spec.model_type")
                elif n == 24:
                    m.treat_whitespace_as_suffix = bool(_int(v, w, "treat_whitespace_as_suffix"))
                elif n == 35:
                    m.byte_fallback = bool(_int(v, w, "byte_fallback"))
                elif n == 44:
                    surface = _bytes(v, w, "trainer_spec.unk_surface")
                    try:
                        m.unk_surface = surface.decode("utf-8")
                    except UnicodeDecodeError:
                        raise _Malformed("trainer_spec.unk_surface is not UTF-8") from None
                elif n in (41, 42):  # an int32 varint: -1 arrives as 2**64 - 1
                    i = _int(v, w, "trainer_spec.bos_id/eos_id")
                    i = i - (1 << 64) if i >= 1 << 63 else i
                    if n == 41:
                        m.bos_id = i
                    else:
                        m.eos_id = i
        elif number == 3:
            for n, w, v in _fields(_bytes(value, wire, "normalizer_spec")):
                if n == 1:
                    m.normalizer_name = _bytes(v, w, "normalizer_spec.name").decode("utf-8", "replace")
                elif n == 2:
                    m.precompiled_charsmap = _bytes(v, w, "precompiled_charsmap")
                elif n == 3:
                    m.add_dummy_prefix = bool(_int(v, w, "add_dummy_prefix"))
                elif n == 4:
                    m.remove_extra_whitespaces = bool(_int(v, w, "remove_extra_whitespaces"))
                elif n == 5:
                    m.escape_whitespaces = bool(_int(v, w, "escape_whitespaces"))
        elif number == 5:
            for n, w, v in _fields(_bytes(value, wire, "denormalizer_spec")):
                if n == 2:
                    m.denormalizer_charsmap = _bytes(v, w, "denormalizer_spec.precompiled_charsmap")
                elif n == 3:
                    m.denormalizer_add_dummy_prefix = bool(_int(v, w, "denormalizer_spec.add_dummy_prefix"))
                elif n == 4:
                    m.denormalizer_remove_extra_whitespaces = bool(_int(v, w, "denormalizer_spec.remove_extra"))
                elif n == 5:
                    m.denormalizer_escape_whitespaces = bool(_int(v, w, "denormalizer_spec.escape_whitespaces"))
    return m


def read(path: Union[str, os.PathLike[str]]) -> Model:
    """The encoding-relevant fields of a `.model` file; refuses a file that is not one."""
    source = os.fspath(path)
    raw = read_input(path, "give the .model file")
    try:
        m = parse(raw)
    except _Malformed as e:
        raise InputError(
            f"{source} is truncated or not a SentencePiece .model file ({e}); give the .model file that spm_train wrote"
        ) from None
    if not m.pieces:
        raise InputError(f"{source} holds no pieces; is this a SentencePiece .model file?")
    return m


# -- writing ------------------------------------------------------------------------------------


def _put_varint(out: bytearray, value: int) -> None:
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return


def _put_int(out: bytearray, number: int, value: int) -> None:
    _put_varint(out, number << 3)
    _put_varint(out, value)


def _put_bytes(out: bytearray, number: int, value: bytes) -> None:
    _put_varint(out, (number << 3) | 2)
    _put_varint(out, len(value))
    out += value


def _normalizer_spec(name: Optional[str], charsmap: bytes, flags: tuple[bool, bool, bool]) -> bytes:
    out = bytearray()
    if name is not None:
        _put_bytes(out, 1, name.encode("utf-8"))
    _put_bytes(out, 2, charsmap)  # even empty, as SentencePiece writes it
    for number, flag in zip((3, 4, 5), flags):
        if not flag:  # true is the .proto's default
            _put_int(out, number, 0)
    return bytes(out)


def dumps(m: Model) -> bytes:
    """A serialized ModelProto with the fields `parse` reads, each written only when it differs
    from the .proto's default (as the sentencepiece package writes them): a piece's type unless
    NORMAL, trainer_spec's flags when on, the normalizer's flags when off; and always
    trainer_spec's model_type and the normalizer's name and rules (empty for identity)."""
    out = bytearray()
    for p in m.pieces:
        piece = bytearray()
        _put_bytes(piece, 1, p.text)
        _put_varint(piece, (2 << 3) | 5)
        piece += struct.pack("<f", p.score)
        if p.type != 1:
            _put_int(piece, 3, p.type)
        _put_bytes(out, 1, bytes(piece))
    trainer = bytearray()
    _put_int(trainer, 3, m.model_type)  # always: spm_train and the sentencepiece package set it
    if m.treat_whitespace_as_suffix:
        _put_int(trainer, 24, 1)
    if m.byte_fallback:
        _put_int(trainer, 35, 1)
    if m.unk_surface != DEFAULT_UNK_SURFACE:
        _put_bytes(trainer, 44, m.unk_surface.encode("utf-8"))
    _put_bytes(out, 2, bytes(trainer))
    flags = (m.add_dummy_prefix, m.remove_extra_whitespaces, m.escape_whitespaces)
    _put_bytes(out, 3, _normalizer_spec(m.normalizer_name, m.precompiled_charsmap, flags))
    if m.denormalizer_charsmap:
        dflags = (
            m.denormalizer_add_dummy_prefix,
            m.denormalizer_remove_extra_whitespaces,
            m.denormalizer_escape_whitespaces,
        )
        _put_bytes(out, 5, _normalizer_spec(None, m.denormalizer_charsmap, dflags))
    return bytes(out)
