"""A token's bytes as people can read them: whitespace made visible, and bytes that are not
UTF-8 on their own (a token that ends inside a character) shown as escapes.

`segments(raw)` cuts the bytes into runs of one class each, which the templates and the
playground's script render as spans (always as text, never as markup):

    >>> segments(b" the\\n")
    [('ws', '·'), ('t', 'the'), ('ws', '↵')]
    >>> segments(b"\\xe6\\x9d")             # the first two bytes of 東
    [('b', '\\\\xe6\\\\x9d')]

Classes: `t` text, `ws` a visible mark standing for a whitespace character, `c` an escaped
invisible or control character, `b` escaped bytes that are not UTF-8 on their own.
"""

from __future__ import annotations

import unicodedata

#: Whitespace drawn as a mark of its own (anything else invisible is escaped as \\uXXXX).
MARKS = {" ": "·", "\t": "→", "\n": "↵", "\r": "␍", "\u00a0": "⍽", "\u3000": "□"}


def _cls(ch: str) -> str:
    if ch in MARKS:
        return "ws"
    if ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Co", "Cn"):
        return "c"
    if "\udc80" <= ch <= "\udcff":  # a byte that is not UTF-8 here (surrogateescape)
        return "b"
    return "t"


def _draw(cls: str, ch: str) -> str:
    if cls == "ws":
        return MARKS[ch]
    if cls == "b":
        return f"\\x{ord(ch) - 0xDC00:02x}"
    if cls == "c":
        return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"
    return ch


def segments(raw: bytes) -> list[tuple[str, str]]:
    """The bytes as runs of (class, drawn text); see the module docstring."""
    out: list[tuple[str, str]] = []
    for ch in raw.decode("utf-8", errors="surrogateescape"):
        cls = _cls(ch)
        drawn = _draw(cls, ch)
        if out and out[-1][0] == cls:
            out[-1] = (cls, out[-1][1] + drawn)
        else:
            out.append((cls, drawn))
    return out


def plain(raw: bytes) -> str:
    """The drawn text of `segments` in one string (for titles and plain lists)."""
    return "".join(s for _, s in segments(raw)) or "∅"


def is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
