"""Sample strings stored with every version at creation, with the ids they encoded to then.

`tokreg verify` re-encodes them: a hash that still matches proves the rows are intact; equal
sample ids prove the encoder still reads them the same way (a changed core, a changed regex
engine). The strings are fixed so that every version is checked on the same inputs, and
together they cover the scripts and spacing that break tokenizers:

    0  plain ASCII prose with punctuation
    1  Latin accents, precomposed and combining (é vs e + U+0301), and ß
    2  CJK: Japanese and Chinese without spaces, a full-width comma
    3  emoji: a skin-tone modifier, a ZWJ sequence and a flag
    4  whitespace runs: leading/trailing spaces, tabs, blank lines, CRLF
    5  code and numbers: digits that cross the 3-digit split, operators, an apostrophe
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, insert, select

from .errors import InputError
from .result import TokenizerData
from .store.models import table
from .store.models_versions import Sample

SAMPLES: tuple[str, ...] = (
    "The quick brown fox jumps over the lazy dog. Hello, world!",
    "Café naïve façade, Zürich; cafe\u0301 with a combining accent; Straße.",
    "東京は日本の首都です。北京欢迎你，世界你好。",
    "emoji: 👍🏽 👩\u200d💻 🇫🇷 🎉!",
    "  two leading spaces\t\ttabs\n\n\nblank lines\r\nCRLF   trailing   ",
    "x = f(1234567) + 3.14159; it's 2026-11-21 // done",
)


def tokenizer_of(data: TokenizerData, ref: str) -> Any:
    """A `Tokenizer` compiled straight from `data`, with no registry."""
    from .hashing import digest
    from .tokenizer import Tokenizer

    content = data.content_bytes()
    return Tokenizer(ref, digest(content)[0], data.algorithm, data.config, content)


def encode_all(tok: Any) -> list[list[int]]:
    """The ids of every sample (special-token strings are plain text here)."""
    return [tok.encode_ordinary(s) for s in SAMPLES]


def store(conn: Connection, version_id: int, data: TokenizerData) -> None:
    """Encodes the samples with `data` and stores them for `version_id`, in the caller's
    transaction. An algorithm this build cannot encode yet stores none; verify says so."""
    try:
        tok = tokenizer_of(data, f"version {version_id}")
    except InputError:
        return
    rows = [
        {"version_id": version_id, "position": i, "text": s, "ids": ids}
        for i, (s, ids) in enumerate(zip(SAMPLES, encode_all(tok)))
    ]
    conn.execute(insert(table(Sample)), rows)


def load(conn: Connection, version_id: int) -> list[tuple[str, list[int]]]:
    """(text, expected ids) of a version's samples, in position order."""
    t = table(Sample)
    return [
        (r.text, list(r.ids))
        for r in conn.execute(
            select(t.c.text, t.c.ids).where(t.c.version_id == version_id).order_by(t.c.position)
        )
    ]
