"""Sample strings stored with every version at creation, with the ids they encoded to then.

The store keeps them (table `samples`) and `tokreg verify` re-encodes them: a hash that still
matches proves the rows are intact; equal sample ids prove the encoder still reads them the same
way (a changed core, a changed regex engine). The strings are fixed so that every version is
checked on the same inputs, and together they cover the scripts and spacing that break
tokenizers:

    0  plain ASCII prose with punctuation
    1  Latin accents, precomposed and combining (é vs e + U+0301), and ß
    2  CJK: Japanese and Chinese without spaces, a full-width comma
    3  emoji: a skin-tone modifier, a ZWJ sequence and a flag
    4  whitespace runs: leading/trailing spaces, tabs, blank lines, CRLF
    5  code and numbers: digits that cross the 3-digit split, operators, an apostrophe
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..data import JsonValue, VersionInfo

if TYPE_CHECKING:  # the lean write (store/sqlite_write.py) imports SAMPLES without SQLAlchemy
    from sqlalchemy import Connection

    from ..encoding.tokenizer import Tokenizer

SAMPLES: tuple[str, ...] = (
    "The quick brown fox jumps over the lazy dog. Hello, world!",
    "Café naïve façade, Zürich; cafe\u0301 with a combining accent; Straße.",
    "東京は日本の首都です。北京欢迎你，世界你好。",
    "emoji: 👍🏽 👩\u200d💻 🇫🇷 🎉!",
    "  two leading spaces\t\ttabs\n\n\nblank lines\r\nCRLF   trailing   ",
    "x = f(1234567) + 3.14159; it's 2026-11-21 // done",
)


def encode_all(tok: Tokenizer) -> list[list[int]]:
    """The ids of every sample (special-token strings are plain text here)."""
    return [tok.encode_ordinary(s) for s in SAMPLES]


@dataclass(frozen=True)
class Sample(JsonValue):
    """A sample as stored with a version (`Registry.samples`): the ids it encoded to when the
    version was written, and the bytes of those tokens as stored (b"" for an id with no row)."""

    text: str
    ids: tuple[int, ...]
    tokens: tuple[bytes, ...]


def stored(conn: Connection, v: VersionInfo) -> list[Sample]:
    """The samples of `v` with their tokens' bytes, read from the rows (nothing is compiled)."""
    from ..store import reads  # on use: the lean write imports SAMPLES without SQLAlchemy

    found = reads.samples(conn, v)
    rows = reads.tokens_by_id(conn, v, {i for _, ids in found for i in ids})
    return [Sample(t, tuple(ids), tuple(rows[i].bytes if i in rows else b"" for i in ids)) for t, ids in found]
