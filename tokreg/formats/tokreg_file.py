"""The `--format tokreg` file: one self-describing JSON file that carries a version without the
database, and `Tokenizer.from_file` reads it back with no registry.

    {"format": "tokreg-tokenizer", "format_version": 1,
     "ref": "gpt-mini@2", "hash": "xxh3-128:…", "sha256": "sha256:…",
     "algorithm": "bpe", "config": {"byte_level": true, "pattern": "…"},
     "tokens": [[0, "byte", "AA==", null], …],     # id, kind, base64 bytes, score (id order)
     "merges": [[101, 32, 256], …]}                # left, right, result ids (rank order)

Reading recomputes the content hash from what it read and refuses a file whose content no
longer has the hash it carries (or the one the caller expects).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import struct
from typing import Optional

from .. import content
from ..data import MergeRow, TokenizerData, TokenRow
from ..errors import InputError, IntegrityError
from ..files import read_input

FORMAT = "tokreg-tokenizer"
FORMAT_VERSION = 1


def dumps(data: TokenizerData, ref: str) -> bytes:
    content_hash, sha = data.hashes()
    doc = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "ref": ref,
        "hash": content_hash,
        "sha256": sha,
        "algorithm": data.algorithm,
        "config": data.config,
        "tokens": [[t.id, t.kind, base64.b64encode(t.bytes).decode("ascii"), t.score] for t in data.tokens],
        "merges": [[m.left, m.right, m.result] for m in data.merges],
    }
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def read(path: str | os.PathLike[str], *, expect_hash: Optional[str] = None) -> tuple[str, str, TokenizerData]:
    """(ref, hash, data) of a tokreg file, after checking its label, version and hash."""
    where = str(path)
    raw = read_input(path, "give the file that `tokreg export --format tokreg` wrote")
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(
            f"{where}: not a tokreg tokenizer file ({e}); write one with `tokreg export REF --format tokreg -o FILE`"
        ) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(
            f'{where}: not a tokreg tokenizer file (no "format": "{FORMAT}"); write one with '
            "`tokreg export REF --format tokreg -o FILE`"
        )
    if not isinstance(doc.get("format_version"), int) or doc["format_version"] > FORMAT_VERSION:
        raise InputError(
            f"{where}: format_version {doc.get('format_version')!r} is newer than this tokreg reads "
            f"({FORMAT_VERSION}); upgrade tokreg"
        )
    try:
        data = TokenizerData(
            algorithm=str(doc["algorithm"]),
            config=dict(doc["config"]),
            tokens=[
                TokenRow(
                    id=int(i),
                    kind=str(k),
                    bytes=base64.b64decode(b, validate=True),
                    score=None if s is None else float(s),
                )
                for i, k, b, s in doc["tokens"]
            ],
            merges=[
                MergeRow(rank=r, left=int(a), right=int(b), result=int(z)) for r, (a, b, z) in enumerate(doc["merges"])
            ],
            source="file",
        )
        claimed = str(doc["hash"])
        raw = data.content()
    except (KeyError, TypeError, ValueError, binascii.Error, struct.error, UnicodeError, OverflowError) as e:
        raise InputError(f"{where}: malformed tokreg tokenizer file ({type(e).__name__}: {e})") from None
    actual = content.check(
        raw, claimed, where, claimed_by="the file says", hint="the file was changed or damaged after export"
    )
    if expect_hash is not None and not actual.startswith(expect_hash):
        raise IntegrityError(f"{where}: its content is {actual}, expected {expect_hash}")
    return str(doc.get("ref") or where), actual, data
