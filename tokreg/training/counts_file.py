"""The counts file (`tokreg count -o FILE`, `tokreg train --from-counts FILE`): piece counts of
a corpus for one way of counting, in a form that can be summed across machines.

Layout: the line `tokreg-counts-v1`, then one line of JSON (the header), then the body, the
core's binary form of the counts (src/count/counts.rs: piece lengths, 64-bit counts, piece
bytes, pieces sorted by bytes). Header keys:

- `counting`: how the pieces were cut (the splitting and its settings: pattern, normalizer,
  max piece bytes); training refuses counts made another way;
- `corpus`: {`fingerprint`, `files`} as a training run records them (see corpus/fingerprint.py, beside this file),
  so a version trained from counts records the corpus the counts came from;
- `pieces`, `total`, `dropped_pieces`, `dropped_total`: for people (the body has them too);
- `body_xxh3`: xxh3-128 of the body, checked on load.

`merge` sums several files counted the same way; the merged corpus is the concatenation of
their corpora, in the order given.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any, Union

import xxhash

from .. import _core
from ..errors import InputError, IntegrityError
from ..files import read_input, write_atomic
from .corpus import fingerprint

FORMAT = "tokreg-counts-v1"
PathLike = Union[str, os.PathLike[str]]  # not a string: typing would compile it at import


def dumps(counts: _core.Counts, counting: dict[str, Any], corpus: dict[str, Any]) -> bytes:
    body = counts.to_bytes()
    stats = counts.stats
    header = {
        "format": FORMAT,
        "counting": counting,
        "corpus": corpus,
        "pieces": stats.pieces,
        "total": stats.total,
        "dropped_pieces": stats.dropped_pieces,
        "dropped_total": stats.dropped_total,
        "body_xxh3": xxhash.xxh3_128_hexdigest(body),
    }
    return FORMAT.encode() + b"\n" + json.dumps(header, sort_keys=True).encode() + b"\n" + body


def write(path: PathLike, counts: _core.Counts, counting: dict[str, Any], corpus: dict[str, Any]) -> None:
    write_atomic(path, dumps(counts, counting, corpus))


def read(path: PathLike) -> tuple[_core.Counts, dict[str, Any]]:
    """(counts, header) of a counts file, its body checked against the header's hash."""
    where = os.fspath(path)
    raw = read_input(path, what="counts file")
    magic, _, rest = raw.partition(b"\n")
    if magic != FORMAT.encode():
        raise InputError(
            f"counts file {where!r} is not a tokreg counts file (expected {FORMAT}); make it with tokreg count"
        )
    line, _, body = rest.partition(b"\n")
    try:
        header = json.loads(line)
    except ValueError:
        raise InputError(f"counts file {where!r} has a damaged header; count the corpus again") from None
    actual = xxhash.xxh3_128_hexdigest(body)
    if actual != header.get("body_xxh3"):
        raise IntegrityError(
            f"counts file {where!r}: its body hashes to {actual}, but its header says {header.get('body_xxh3')}; "
            "it was changed or truncated, count the corpus again",
            expected=header.get("body_xxh3"),
            actual=actual,
        )
    return _core.Counts.from_bytes(body), header


def merge(paths: Sequence[PathLike]) -> tuple[_core.Counts, dict[str, Any], dict[str, Any]]:
    """(summed counts, counting settings, corpus record) of counts files made the same way."""
    if len(paths) < 2:
        raise InputError("--merge needs at least two counts files")
    parts = [read(p) for p in paths]
    counting = parts[0][1]["counting"]
    for p, (_, h) in zip(paths, parts):
        if h["counting"] != counting:
            raise InputError(
                f"counts file {os.fspath(p)!r} was counted another way ({h['counting']}) than "
                f"{os.fspath(paths[0])!r} ({counting}); counts only add up when counted alike"
            )
    files = [f for _, h in parts for f in h["corpus"]["files"]]
    corpus = {"fingerprint": fingerprint(files), "files": files}
    return _core.Counts.sum([c for c, _ in parts]), counting, corpus
