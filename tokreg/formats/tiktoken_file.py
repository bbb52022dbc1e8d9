"""tiktoken's `.tiktoken` files: one `base64(token bytes) rank` per line, ranks = token ids.

A `.tiktoken` file holds ranks but not the split pattern or the special tokens, so an import
names them (tiktoken_presets.py has them for the well-known encodings; algorithms/bpe/tiktoken.py
turns the ranks into a version). Export writes the ranks back in the same form, byte for byte.

A token may be empty: OpenAI's Whisper multilingual file has `= 50256`, which tiktoken loads as
`b""` (`base64.b64decode(b"=")`); such a rank is a token that decodes to nothing and that no
text encodes to. Its base64 is written `=` (plain base64 of no bytes is no characters, a line
tiktoken cannot read back).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable

from ..errors import InputError

#: Token ids are u32.
MAX_ID = 2**32 - 1

#: The base64 of the empty token, as OpenAI's files write it.
EMPTY = b"="


def parse_ranks(raw: bytes, source: str) -> dict[bytes, int]:
    """token bytes -> rank, with a clear error naming the line that is malformed."""
    ranks: dict[bytes, int] = {}
    seen: set[int] = set()
    for n, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            raise InputError(f"{source}: line {n} is not 'BASE64 RANK': {line[:60]!r}; is this a .tiktoken file?")
        if len(parts[1]) > 10 or int(parts[1]) > MAX_ID:
            raise InputError(f"{source}: line {n} has the rank {parts[1][:20].decode()}; ranks are 0..{MAX_ID}")
        try:
            token = b"" if parts[0] == EMPTY else base64.b64decode(parts[0], validate=True)
        except (binascii.Error, ValueError):
            raise InputError(f"{source}: line {n} has invalid base64 {parts[0][:40]!r}") from None
        rank = int(parts[1])
        if token in ranks or rank in seen:
            raise InputError(f"{source}: line {n} repeats a token or rank ({rank})")
        ranks[token] = rank
        seen.add(rank)
    if not ranks:
        raise InputError(f"{source}: no ranks found; the file is empty")
    return ranks


def parse_specials(items: Iterable[str]) -> dict[str, int]:
    """`TOKEN=ID` strings (the CLI's --special) -> {token: id}."""
    out: dict[str, int] = {}
    for item in items:
        token, sep, num = item.rpartition("=")
        if not sep or not token or not (num.isascii() and num.isdigit()):
            raise InputError(f"--special {item!r} is not TOKEN=ID, e.g. --special '<|endoftext|>=100257'")
        if len(num) > 10 or int(num) > MAX_ID:
            raise InputError(f"--special {item!r}: ids are 0..{MAX_ID}")
        if token in out:
            raise InputError(f"--special {token!r} is given twice; give each special token once")
        out[token] = int(num)
    return out


def dumps(tokens: Iterable[tuple[int, bytes]]) -> bytes:
    """The `.tiktoken` text of (id, bytes) of the ordinary tokens, in rank order."""
    lines = [(base64.b64encode(b) or EMPTY) + b" " + str(i).encode() for i, b in sorted(tokens)]
    return b"\n".join(lines) + b"\n"
