"""Hugging Face's offset trimming, applied to the spans the core gives: a `tokenizer.json`
whose post-processor is `ByteLevel(trim_offsets=true)` or `RobertaProcessing(trim_offsets=true)`
makes `Encoding.offsets` leave out each token's leading and trailing spaces (tokenizers'
processors/byte_level.rs `process_offsets`). The import carries the setting in the version's
`hf_settings` (formats/hf_settings.py, `{"trim_offsets": {"add_prefix_space": …}}`); this file
applies it.

The rule (tokenizers applies it to the character offsets, after converting them from bytes):
a token's leading spaces `k` move its start by `k` (never past its end), its trailing spaces
`m` move its end back by `m` (never before its start). A space is a byte-level token's space
byte (its `Ġ`), or a whitespace character of a special token's text. The first token (index 0,
or starting at 0) keeps one leading space when `add_prefix_space` is set. The byte offsets move
by the same counts (a space is one byte), so they keep naming the same text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional

# Rust's char::is_whitespace (Unicode White_Space), which tokenizers tests.
_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def setting(config: Mapping[str, Any]) -> Optional[bool]:
    """`add_prefix_space` of the version's offset trimming, or None when it does not trim."""
    settings = config.get("hf_settings")
    trim = settings.get("trim_offsets") if isinstance(settings, dict) else None
    return bool(trim["add_prefix_space"]) if isinstance(trim, dict) else None


def _spaces(token: str) -> tuple[int, int]:
    lead = len(token) - len(token.lstrip("".join(_WHITESPACE)))
    trail = len(token) - len(token.rstrip("".join(_WHITESPACE)))
    return lead, trail


def trim(
    ids: Sequence[int],
    chars: list[tuple[int, int]],
    spans: list[tuple[int, int]],
    add_prefix_space: bool,
    token_spaces: Callable[[int], tuple[int, int]],
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The character and byte spans of `ids` trimmed; `token_spaces(id)` gives a token's
    (leading, trailing) space count."""
    out_chars, out_spans = list(chars), list(spans)
    for i, tid in enumerate(ids):
        lead, trail = token_spaces(tid)
        if lead or trail:
            first = i == 0 or chars[i][0] == 0
            if first and add_prefix_space and lead == 1:
                lead = 0
            out_chars[i] = _moved(chars[i], lead, trail)
            out_spans[i] = _moved(spans[i], lead, trail)
    return out_chars, out_spans


def _moved(span: tuple[int, int], lead: int, trail: int) -> tuple[int, int]:
    start, end = span
    if lead:
        start = min(start + lead, end)
    if trail and end >= trail:
        end = max(end - trail, start)
    return start, end


def special_spaces(text: str) -> tuple[int, int]:
    """(leading, trailing) whitespace characters of a special token's text."""
    return _spaces(text)


def byte_spaces(token: bytes) -> tuple[int, int]:
    """(leading, trailing) space bytes of a byte-level token (its `Ġ`)."""
    return len(token) - len(token.lstrip(b" ")), len(token) - len(token.rstrip(b" "))
