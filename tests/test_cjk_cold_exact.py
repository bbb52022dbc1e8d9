"""Cold CJK calls give tiktoken's ids: a fresh encoder (empty piece caches, so every character,
character pair and clause is seen for the first time, as in the cold rows of `benchmarks/versus`)
on Japanese, Chinese and Korean text and on random runs of kana, kanji and Hangul mixed with
ASCII, spaces and punctuation, with cl100k and o200k. These are the paths `rank.rs` takes for
clauses of 3-byte characters (one character at a time, each character merged in closed form,
short Hangul clauses merged whole), checked against the reference rule."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tokreg import _core
from tokreg.content import serialize as content_bytes

from .conftest import data_file, lang_file
from .test_core_encoder import read_ranks

VOCABS = {"cl100k_base": "cl100k", "o200k_base": "o200k"}

#: Building each vocabulary's content from its rank file takes 3-6 s on a loaded machine; the
#: merge of one 3-byte character is checked in the fast lane by `cargo test` (`rank.rs`).
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=sorted(VOCABS))
def vocab(request: pytest.FixtureRequest) -> tuple[Any, Any]:
    """(a function making a fresh tokreg encoder, tiktoken's encoding) for one vocabulary."""
    tiktoken = pytest.importorskip("tiktoken")
    name = request.param
    pattern = _core.PATTERNS[VOCABS[name]]
    ranks = read_ranks(data_file(f"{name}.tiktoken"))
    ordinary = sorted((r, t) for t, r in ranks.items())
    merges = _core.merges_from_ranks(ordinary)
    tokens = [(r, "byte" if len(t) == 1 else "merged", t, None) for r, t in ordinary]
    content = content_bytes("bpe", {"byte_level": True, "pattern": pattern}, tokens, merges)
    theirs = tiktoken.Encoding(f"{name}_test", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    return (lambda: _core.Encoder.byte_bpe(content, pattern)), theirs


def random_cjk(seed: int, n: int) -> str:
    """Random characters of the scripts whose clauses go one character at a time: hiragana,
    katakana, common kanji, Hangul syllables, with some ASCII words, digits, spaces and CJK
    punctuation between them (so clauses of every length, and pieces with a leading space)."""
    rnd = random.Random(seed)
    pools = [
        [chr(c) for c in range(0x3041, 0x3097)],
        [chr(c) for c in range(0x30A1, 0x30FB)],
        [chr(c) for c in range(0x4E00, 0x4E00 + 3000)],
        [chr(c) for c in range(0xAC00, 0xAC00 + 2000)],
        ["、", "。", "「", "」", " ", " ", "\n", "abc", "PCI", "7", "ー"],
    ]
    return "".join(rnd.choice(rnd.choice(pools)) for _ in range(n))


def texts() -> dict[str, str]:
    """Name -> text: the real ones are read lazily by the test (a missing corpus skips it)."""
    return {f"random {k}": random_cjk(k, 4000) for k in range(3)}


@pytest.mark.parametrize("name", sorted(texts()))
def test_random_cjk_cold_equals_tiktoken(vocab: tuple[Any, Any], name: str) -> None:
    fresh, theirs = vocab
    text = texts()[name]
    want = theirs.encode_ordinary(text)
    enc = fresh()
    assert enc.encode_ordinary(text) == want  # cold: every clause seen for the first time
    assert enc.encode_ordinary(text) == want  # warm: from the piece caches


@pytest.mark.parametrize("source", ["ja.txt", "dr.zh-cn.txt"])
def test_real_cjk_cold_equals_tiktoken(vocab: tuple[Any, Any], source: str) -> None:
    fresh, theirs = vocab
    path = lang_file(source) if source == "ja.txt" else data_file(source)
    with path.open(encoding="utf-8") as f:
        text = f.read(40_000)
    # Korean: runs of Hangul syllables in the text's own order are not in the shared data, so
    # the Chinese text's characters are mapped onto syllables one to one (a clause keeps its
    # shape; o200k's many multi-syllable tokens make tokens span characters often).
    if source == "dr.zh-cn.txt":
        text += "".join(chr(0xAC00 + ord(c) % 11172) if ord(c) >= 0x4E00 else c for c in text[:20_000])
    want = theirs.encode_ordinary(text)
    enc = fresh()
    assert enc.encode_ordinary(text) == want
    assert enc.encode_ordinary(text) == want
