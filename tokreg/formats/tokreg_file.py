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
from typing import Any, Optional

from .. import content
from ..data import MergeRow, TokenizerData, TokenRow
from ..errors import InputError, IntegrityError
from ..files import read_input
from . import strict_json

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


def _int(v: Any) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise TypeError(f"{v!r:.30} is not an integer")
    return v


def _str(v: Any, what: str) -> str:
    if not isinstance(v, str):
        raise TypeError(f"{what} is {v!r:.30}, not a string")
    return v


def _dict(v: Any, what: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise TypeError(f"{what} is {v!r:.30}, not an object")
    return v


def _list(v: Any, what: str) -> list[Any]:
    if not isinstance(v, list):
        raise TypeError(f"{what} is {v!r:.30}, not a list")
    return v


def _token(t: Any) -> TokenRow:
    """[id, kind, base64 bytes, score or null]"""
    i, k, b, s = _list(t, "a token")
    if s is not None and (not isinstance(s, (int, float)) or isinstance(s, bool)):
        raise TypeError(f"a token score is {s!r:.30}, not a number")
    return TokenRow(
        id=_int(i),
        kind=_str(k, "a token kind"),
        bytes=base64.b64decode(_str(b, "a token"), validate=True),
        score=None if s is None else float(s),
    )


def read(path: str | os.PathLike[str], *, expect_hash: Optional[str] = None) -> tuple[str, str, TokenizerData, bytes]:
    """(ref, hash, data, canonical content) of a tokreg file, after checking its label, version
    and hash: the content is made and hashed here once, for callers that compile it."""
    where = str(path)
    raw = read_input(path, "give the file that `tokreg export --format tokreg` wrote")
    doc = strict_json.loads(raw, where, "tokreg tokenizer file (write one with `tokreg export REF --format tokreg`)")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(
            f'{where}: not a tokreg tokenizer file (no "format": "{FORMAT}"); write one with '
            "`tokreg export REF --format tokreg -o FILE`"
        )
    version = doc.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version > FORMAT_VERSION:
        raise InputError(
            f"{where}: format_version {version!r:.20} is newer than this tokreg reads ({FORMAT_VERSION}); "
            "upgrade tokreg"
        )
    try:
        data = TokenizerData(
            algorithm=_str(doc["algorithm"], "algorithm"),
            config=_dict(doc["config"], "config"),
            tokens=[_token(t) for t in _list(doc["tokens"], "tokens")],
            merges=[
                MergeRow(rank=r, left=_int(a), right=_int(b), result=_int(z))
                for r, (a, b, z) in enumerate(_list(doc["merges"], "merges"))
            ],
            source="file",
        )
        claimed = _str(doc["hash"], "hash")
        raw = data.content()
    except (KeyError, TypeError, ValueError, binascii.Error, UnicodeError, OverflowError) as e:
        raise InputError(f"{where}: malformed tokreg tokenizer file ({type(e).__name__}: {str(e)[:100]})") from None
    actual = content.check(
        raw, claimed, where, claimed_by="the file says", hint="the file was changed or damaged after export"
    )
    if expect_hash is not None and not actual.startswith(expect_hash):
        raise IntegrityError(f"{where}: its content is {actual}, expected {expect_hash}")
    return str(doc.get("ref") or where), actual, data, raw
