"""tiktoken's `.tiktoken` files: one `base64(token bytes) rank` per line, ranks = token ids.

A `.tiktoken` file holds ranks but not the split pattern or the special tokens, so an import
names them. The merge list is recovered from the ranks (each token split by the merges of
lower rank), so an imported vocabulary is stored, queried and diffed like a trained one.
Export writes the ranks back in the same form, byte for byte.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from typing import Optional

from .. import _core, patterns
from ..errors import InputError, IntegrityError
from ..files import read_input
from ..result import MergeRow, TokenizerData, TokenRow


def parse_ranks(raw: bytes, source: str) -> dict[bytes, int]:
    """token bytes -> rank, with a clear error naming the line that is malformed."""
    ranks: dict[bytes, int] = {}
    seen: set[int] = set()
    for n, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            raise InputError(
                f"{source}: line {n} is not 'BASE64 RANK': {line[:60]!r}; is this a .tiktoken file?"
            )
        try:
            token = base64.b64decode(parts[0], validate=True)
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


def read(
    path: str | os.PathLike[str],
    *,
    pattern: str,
    specials: Optional[dict[str, int]] = None,
    expect_sha256: Optional[str] = None,
) -> TokenizerData:
    """Reads a `.tiktoken` file into a byte-level BPE `TokenizerData` (nothing is written)."""
    source = str(path)
    raw = read_input(path, "give the .tiktoken file")
    sha = hashlib.sha256(raw).hexdigest()
    if expect_sha256 is not None:
        want = expect_sha256.lower().removeprefix("sha256:")
        if sha != want:
            raise IntegrityError(
                f"{source}: sha256 is {sha}, expected {want}; the file is not the one you meant "
                "(nothing was written)"
            )
    ranks = parse_ranks(raw, source)
    _, regex = patterns.resolve(pattern)
    specials = dict(specials or {})
    taken = set(ranks.values())
    for s, i in specials.items():
        if i in taken:
            raise InputError(
                f"special token {s!r} has id {i}, which is already the rank of an ordinary token"
            )
    ordinary = sorted(((r, t) for t, r in ranks.items()))
    try:
        enc = _core.ByteBpe(ordinary, sorted(specials.items(), key=lambda x: x[1]), regex)
    except ValueError as e:
        raise InputError(f"{source}: not a usable byte-level vocabulary: {e}") from None
    rows = [TokenRow(id=r, bytes=t, kind="byte" if len(t) == 1 else "merged") for r, t in ordinary]
    rows += [TokenRow(id=i, bytes=s.encode("utf-8"), kind="special") for s, i in specials.items()]
    rows.sort(key=lambda t: t.id)
    merges = [
        MergeRow(rank=k, left=a, right=b, result=z) for k, (a, b, z) in enumerate(enc.merges_from_ranks())
    ]
    return TokenizerData(
        algorithm="bpe",
        config={"byte_level": True, "pattern": regex},
        tokens=rows,
        merges=merges,
        source="import:tiktoken",
        run=None,
    )


def parse_specials(items: tuple[str, ...] | list[str]) -> dict[str, int]:
    """`TOKEN=ID` strings (the CLI's --special) -> {token: id}."""
    out: dict[str, int] = {}
    for item in items:
        token, sep, num = item.rpartition("=")
        if not sep or not token or not num.isdigit():
            raise InputError(f"--special {item!r} is not TOKEN=ID, e.g. --special '<|endoftext|>=100257'")
        out[token] = int(num)
    return out


def dumps(tokens: list[tuple[int, bytes, str]]) -> bytes:
    """The `.tiktoken` text of (id, bytes, kind) rows: ordinary tokens, in rank order."""
    lines = [
        base64.b64encode(b) + b" " + str(i).encode() for i, b, kind in sorted(tokens) if kind != "special"
    ]
    return b"\n".join(lines) + b"\n"
