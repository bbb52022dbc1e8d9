"""`tokreg-content-v1`, the bytes a version's content hash is computed over, built here by hand
from the specification in tokreg/content.py's docstring (not with tokreg's writer), for a tiny
tokenizer of each family: byte-level BPE with a special token, character BPE, WordPiece and
Unigram. The bytes must be the content tokreg wrote, and their xxh3-128 and sha256 labels the
hashes the registry gives the version."""

from __future__ import annotations

import hashlib
import json
import struct
import sys
from pathlib import Path
from typing import Any

import pytest
import xxhash
from sqlalchemy import text

from tokreg import BpeOptions, Registry, UnigramOptions, WordPieceOptions, content

TEXT = "the cat the car the rat\nlow lower newest widest\naaabdaaabac\n猫在车上。老鼠在车下。\n" * 30

FAMILIES: dict[str, Any] = {
    # A pattern with a non-ASCII character: the JSON line holds it as UTF-8.
    "byte-level bpe": BpeOptions(vocab_size=280, pattern=r"\s+|[^\s。]+|。", special=("<eos>",), template="$A <eos>"),
    "char bpe": BpeOptions(vocab_size=60, char_level=True, end_of_word_suffix="</w>"),
    "wordpiece": WordPieceOptions(vocab_size=60, special=("[CLS]", "[SEP]"), lowercase=True),
    # Too small for the 256 byte pieces; 29 is the most this text gives (as in spm_train).
    "unigram": UnigramOptions(vocab_size=29, byte_fallback=False),
}


def by_hand(algorithm: str, config: dict[str, Any], tokens: list[Any], merges: list[Any]) -> bytes:
    """The spec, step by step: (1) the magic line; (2) the JSON line, sorted keys, no spaces,
    UTF-8; (3) `tokens N` and per token in id order: id u32, kind length u16, kind, bytes length
    u32, bytes, then 0x00 or 0x01 + score f64, all little-endian; (4) `merges M` and per merge in
    rank order left, right, result as u32; only BPE's merges count, the others write `merges 0`."""
    out = b"tokreg-content-v1\n"
    head = {"algorithm": algorithm, "config": config}
    out += json.dumps(head, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"
    out += b"tokens %d\n" % len(tokens)
    for tid, kind, raw, score in tokens:
        out += struct.pack("<I", tid) + struct.pack("<H", len(kind)) + kind.encode("ascii")
        out += struct.pack("<I", len(raw)) + raw
        out += b"\x00" if score is None else b"\x01" + struct.pack("<d", score)
    hashed = merges if algorithm == "bpe" else []
    out += b"merges %d\n" % len(hashed)
    for left, right, result in hashed:
        out += struct.pack("<III", left, right, result)
    return out


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_content_built_from_the_spec_is_what_tokreg_wrote_and_hashed(
    family: str, registry: Registry, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    v = registry.train("t", [corpus], FAMILIES[family])
    with registry.engine.connect() as c:
        row = c.execute(text("SELECT algorithm, config FROM versions WHERE id = :v"), {"v": v.id}).one()
        tokens = c.execute(
            text("SELECT id, kind, bytes, score FROM tokens WHERE version_id = :v ORDER BY id"), {"v": v.id}
        ).all()
        merges = c.execute(
            text("SELECT left_id, right_id, result_id FROM merges WHERE version_id = :v ORDER BY rank"), {"v": v.id}
        ).all()
        written = c.execute(text("SELECT content FROM version_contents WHERE version_id = :v"), {"v": v.id}).scalar()
    config = row.config if isinstance(row.config, dict) else json.loads(row.config)
    built = by_hand(row.algorithm, config, [tuple(t) for t in tokens], [tuple(m) for m in merges])

    assert len(tokens) == v.vocab_size and (family == "unigram" or len(merges) > 0)  # WordPiece records merges too
    if family == "byte-level bpe":
        assert "。" in json.dumps(config, ensure_ascii=False) and any(t.kind == "special" for t in tokens)
    assert bytes(written) == built
    assert v.content_hash == "xxh3-128:" + xxhash.xxh3_128_hexdigest(built)
    assert v.sha256 == "sha256:" + hashlib.sha256(built).hexdigest()
    assert registry.load(v.ref).hash == v.content_hash


@pytest.mark.parametrize("size", [0, 1000, content.BUILTIN_SHA256_BYTES, content.BUILTIN_SHA256_BYTES + 1])
def test_the_sha256_label_is_the_same_with_or_without_openssl(size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """`digest` hashes small content with Python's own SHA-256 while hashlib (OpenSSL) is not
    loaded, larger content with hashlib: the label is the same either way."""
    raw = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    want = "sha256:" + hashlib.sha256(raw).hexdigest()
    assert content.digest(raw)[1] == want  # hashlib loaded (this test imported it)
    monkeypatch.delitem(sys.modules, "hashlib")
    assert content.digest(raw)[1] == want  # as in `tokreg train`: the builtin up to the size
    assert ("hashlib" in sys.modules) == (size > content.BUILTIN_SHA256_BYTES)
