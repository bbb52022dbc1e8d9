"""Hypothesis strategies for text at the borders: the pieces tests/test_tiktoken.py draws from
(letters with odd case mappings, CJK, Arabic, Devanagari, Hangul, combining marks, emoji and ZWJ
sequences, whitespace, digits, contractions, punctuation, any text), and what the conformance
suite adds: right-to-left text with its direction marks, full-width forms, control characters,
long whitespace runs, and lines of 10 KB.

    TEXTS       a line of up to 12 pieces
    LONG_LINES  a line repeated to LONG (10,240) characters
    BORDER      TEXTS mostly, LONG_LINES now and then: what the conformance tests draw

`drawn(strategy, n)` gives n examples without pytest (tools/conformance_table.py), through the
same engine (`@given`, derandomized), so the table and the tests see the same kind of text.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..test_tiktoken import PIECES as TIKTOKEN_PIECES
from ..test_tiktoken import WHITESPACE

LONG = 10_240


def _chars(lo: int, hi: int, size: int = 8) -> st.SearchStrategy[str]:
    return st.text(st.characters(min_codepoint=lo, max_codepoint=hi), min_size=1, max_size=size)


#: bidi controls: LRM, RLM, ALM, LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI
BIDI = [
    "\u200e",
    "\u200f",
    "\u061c",
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
]

BORDER_PIECES = st.one_of(
    _chars(0x05D0, 0x05EA),  # Hebrew letters
    _chars(0x0591, 0x05C7, 3),  # Hebrew points and marks
    st.lists(st.one_of(_chars(0x0621, 0x064A, 6), st.sampled_from(BIDI), st.just(" ")), min_size=1, max_size=6).map(
        "".join
    ),  # Arabic words among direction marks
    _chars(0xFF01, 0xFF5E),  # full-width ASCII
    _chars(0xFF61, 0xFF9F),  # half-width katakana
    st.sampled_from(["\u3000", "ＡＢＣ１２３", "（全角）", "ｈｅｌｌｏ　ｗｏｒｌｄ", "￥", "￦"]),
    st.text(st.characters(categories=("Cc",)), min_size=1, max_size=4),  # C0, DEL, C1 controls
    st.text(st.characters(categories=("Cf",)), min_size=1, max_size=3),  # format characters
    st.lists(st.sampled_from(WHITESPACE), min_size=8, max_size=80).map("".join),  # whitespace runs
    st.sampled_from([" " * 64, "\t" * 16, "\n" * 12, " \u00a0" * 20]),
)
PIECES = st.one_of(TIKTOKEN_PIECES, BORDER_PIECES)
TEXTS = st.lists(PIECES, max_size=12).map("".join)
LONG_LINES = (
    st.lists(PIECES, min_size=1, max_size=6).map("".join).filter(bool).map(lambda t: (t * (LONG // len(t) + 1))[:LONG])
)
BORDER = st.one_of(TEXTS, TEXTS, TEXTS, LONG_LINES)


def drawn(strategy: st.SearchStrategy[str], n: int) -> list[str]:
    """`n` examples of `strategy`, the same ones each run (derandomized, no example database)."""
    out: list[str] = []
    if n <= 0:
        return out

    @settings(
        max_examples=n,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        phases=["generate"],
    )
    @given(strategy)
    def collect(text: str) -> None:
        out.append(text)

    collect()
    return out[:n]
