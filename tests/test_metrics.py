"""Each metric against a tiny example computed by hand, so a wrong formula fails: the pure
functions of tokreg/metrics.py, then `evaluate.measure` end to end on a hand-made vocabulary
whose every count can be followed on paper."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest

from tokreg import InputError, Registry
from tokreg.evaluation import metrics

from .tiny import tiktoken_file


def test_compression_counts_bytes_and_characters() -> None:
    # "héllo wörld": 11 characters, 13 UTF-8 bytes (é and ö take two each), in 4 tokens
    assert metrics.bytes_per_token(13, 4) == 3.25
    assert metrics.chars_per_token(11, 4) == 2.75
    assert metrics.bytes_per_token(13, 0) == 0.0


def test_fertility_and_continued_words_weigh_occurrences() -> None:
    # three words in one token, one word in two: 5 tokens / 4 words; 1 of 4 words continued
    assert metrics.fertility({1: 3, 2: 1}) == 1.25
    assert metrics.continued_words({1: 3, 2: 1}) == 0.25
    # a word in three tokens is continued once, not twice; a 0-token word (dropped) counts
    assert metrics.fertility({3: 1, 1: 1}) == 2.0
    assert metrics.continued_words({3: 1, 1: 1, 0: 2}) == 0.25
    assert metrics.fertility({}) == metrics.continued_words({}) == 0.0


def test_renyi_efficiency_matches_the_paper_and_uses_the_vocabulary_size() -> None:
    # tokenization-scorer's own example, "pick @@ed pick @@l @@ed pick @@les": counts 3, 2, 1, 1,
    # H_2.5 = -2/3 * log2((3/7)^2.5 + (2/7)^2.5 + 2 (1/7)^2.5) = 1.65301 bits; / log2(4) = 0.82651
    assert metrics.renyi_efficiency([3, 2, 1, 1], 4) == pytest.approx(0.8265064834225245, rel=1e-12)
    # the same distribution in a vocabulary of 8: / log2(8) = 3 instead of 2
    assert metrics.renyi_efficiency([1, 3, 1, 2], 8) == pytest.approx(1.653012966845049 / 3, rel=1e-12)
    # α matters: at α = 2 the same counts give -log2(Σ p²) / 2 = -log2(15/49) / 2
    assert metrics.renyi_efficiency([3, 2, 1, 1], 4, alpha=2.0) == pytest.approx(-math.log2(15 / 49) / 2)
    # a uniform distribution over the whole vocabulary is perfectly efficient
    assert metrics.renyi_efficiency([5, 5, 5, 5], 4) == pytest.approx(1.0)
    with pytest.raises(InputError, match="α"):
        metrics.renyi_efficiency([1], 4, alpha=1.0)


def test_vocabulary_and_unknown_rates() -> None:
    assert metrics.vocab_utilisation(3, 258) == 3 / 258
    assert metrics.unknown_rate(2, 8) == 0.25


def test_premium_and_spread() -> None:
    # 30 tokens for what the reference says in 20: a premium of 1.5
    assert metrics.premium(30, 20) == 1.5
    # premiums 1.0 (reference), 1.5 and 0.8: the worst-served language pays 1.5 / 0.8 = 1.875x
    assert metrics.spread([1.0, 1.5, 0.8]) == 1.875
    # the spread is the same whichever language is the reference
    tokens = {"en": 20, "de": 30, "zh": 16}
    for ref in tokens:
        assert metrics.spread([metrics.premium(n, tokens[ref]) for n in tokens.values()]) == pytest.approx(1.875)


def test_words_cut_punctuation_marks_and_ideographs() -> None:
    # the Devanagari word keeps its vowel signs and virama (combining marks, not \w in Python)
    assert metrics.words("It's 2 o'clock. 中文 text हिन्दी foo_bar café café") == Counter(
        ["It", "'", "s", "2", "o", "'", "clock", ".", "中", "文", "text", "हिन्दी", "foo", "_", "bar", "café", "café"]
    )
    assert metrics.words("  \n\t ") == Counter()


def test_measure_on_a_hand_made_vocabulary(registry: Registry, tmp_path: Path) -> None:
    # The 256 bytes, then 256 = "ab" and 257 = " ab"; the cl100k pattern cuts "ab ab abc" into
    # "ab" " ab" " abc", which encode to [256], [257], [257, 99]: 4 tokens for 9 bytes.
    registry.import_tiktoken("hand", tiktoken_file(tmp_path / "hand.tiktoken", [b"ab", b" ab"]), pattern="cl100k")
    text = tmp_path / "t.txt"
    text.write_text("ab ab abc", encoding="utf-8")
    m = registry.evaluate("hand", text).scores[0].metrics  # one ref and one path need no lists
    assert m["tokens"] == 4
    assert m["bytes_per_token"] == m["chars_per_token"] == 9 / 4
    # words "ab" x2 and "abc": "a ab" is [97, 257] and "a abc" [97, 257, 99], less "a" = [97]:
    # 1, 1 and 2 tokens -> fertility 4/3, one word of three continued
    assert m["fertility"] == pytest.approx(4 / 3)
    assert m["continued_words"] == pytest.approx(1 / 3)
    # counts {256: 1, 257: 2, 99: 1}: p = 1/4, 1/2, 1/4; Σ p^2.5 = 2/32 + 1/(4√2);
    # H_2.5 = -(2/3) ln(0.239277) = 0.953431 nats; / ln(258) = 0.171696
    assert m["renyi_efficiency"] == pytest.approx(0.1716963904761239, rel=1e-12)
    assert m["vocab_utilisation"] == 3 / 258
    assert m["unknown_rate"] == 0.0
