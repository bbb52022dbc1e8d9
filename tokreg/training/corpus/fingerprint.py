"""What a run records of its corpus, and the fingerprint over it.

Per source, in the order read (see sources.py): `name`, `size` (bytes read, decompressed; for
a JSON Lines file the file's own bytes, not the extracted text; for Parquet the file on
disk), `xxh3` (xxh3-128 of exactly those bytes), and to read it again: `path` (absolute; null
for standard input and iterators), `format`, `field`, `compression`, and `whole` (false when
`--sample-bytes` stopped reading inside it: then `size` and `xxh3` cover the part read).

The fingerprint is `xxh3-128:` + xxh3-128 of the canonical JSON of [[name, size, xxh3], ...]
in that order (the same as tokreg 0.1's for plain files).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import xxhash

from ...content import PREFIX, canonical_json
from .sources import Source


def fingerprint(records: Sequence[dict[str, Any]]) -> str:
    key = [[r["name"], r["size"], r["xxh3"]] for r in records]
    return PREFIX + xxhash.xxh3_128_hexdigest(canonical_json(key).encode())


def source_record(src: Source, size: int, digest: str, compression: str, whole: bool) -> dict[str, Any]:
    return {
        "path": src.path,
        "name": src.name,
        "size": size,
        "xxh3": digest,
        "format": src.format,
        "field": src.field,
        "compression": compression,
        "whole": whole,
    }
