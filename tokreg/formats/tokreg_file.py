"""The `--format tokreg` file: one self-describing JSON file that carries a version without the
database, and `Tokenizer.from_file` reads it back with no registry.

    {"format": "tokreg-tokenizer", "format_version": 1,
     "ref": "gpt-mini@2", "hash": "xxh3-128:…", "sha256": "sha256:…",
     "algorithm": "bpe", "config": {"byte_level": true, "pattern": "…"},
     "tokens": [[0, "byte", "AA==", null], …],     # id, kind, base64 bytes, score (id order)
     "merges": [[101, 32, 256], …]}                # left, right, result ids (rank order)

Reading recomputes the content hash from what it read and refuses a file whose content no
longer has the hash it carries (or the one the caller expects). The `tokens` and `merges`
arrays are read by the core (src/tokreg_file.rs) straight into canonical content, with no
Python object per row; the other members are a few hundred bytes, read by strict_json.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from array import array
from dataclasses import dataclass
from typing import Any, Optional

from .. import _core, content
from ..data import MergeRow, TokenizerData
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


WHAT = "tokreg tokenizer file (write one with `tokreg export REF --format tokreg`)"


@dataclass(frozen=True)
class TokregFile:
    """A tokreg file, read and checked: its ref, the hash of its content (checked), the canonical
    content, and the merges it lists (u32 triples; a WordPiece or Unigram file may carry merges
    that its content does not hash)."""

    ref: str
    hash: str
    content: bytes
    merges: array  # type: ignore[type-arg]  # left, right, result, ... (rank order)

    def data(self, source: str = "file") -> TokenizerData:
        """The version's rows (what an import records), from the checked content."""
        data = TokenizerData.from_content(self.content, source)
        m = self.merges
        data.merges = [MergeRow(r, m[3 * r], m[3 * r + 1], m[3 * r + 2]) for r in range(len(m) // 3)]
        return data


def _str(v: Any, what: str) -> str:
    if not isinstance(v, str):
        raise TypeError(f"{what} is {v!r:.30}, not a string")
    return v


def _dict(v: Any, what: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise TypeError(f"{what} is {v!r:.30}, not an object")
    return v


def _members(raw: bytes, where: str) -> tuple[dict[str, Any], dict[str, tuple[int, int]]]:
    """The small members, parsed strictly, and the spans of `tokens` and `merges` in `raw`."""
    try:
        spans = _core.tokreg_file_members(raw)
    except InputError as e:
        raise InputError(f"{where}: not a {WHAT} ({e})") from None
    seen: set[str] = set()
    small, big = [], {}
    for key, start, end in spans:
        if key in seen:
            raise InputError(f"{where}: not a {WHAT} (the key {key[:40]!r} appears twice in one object)")
        seen.add(key)
        if key in ("tokens", "merges"):
            big[key] = (start, end)
        else:
            small.append(json.dumps(key).encode() + b":" + raw[start:end])
    return strict_json.loads(b"{" + b",".join(small) + b"}", where, WHAT), big


def read(path: str | os.PathLike[str], *, expect_hash: Optional[str] = None) -> TokregFile:
    """A tokreg file, after checking its label, version and hash: the content is made and hashed
    here once, for callers that compile it."""
    where = str(path)
    raw = read_input(path, "give the file that `tokreg export --format tokreg` wrote")
    doc, spans = _members(raw, where)
    if doc.get("format") != FORMAT:
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
        algorithm = _str(doc["algorithm"], "algorithm")
        config = _dict(doc["config"], "config")
        claimed = _str(doc["hash"], "hash")
        n_tokens, records, n_merges, triples = _core.tokreg_file_rows(raw, spans["tokens"], spans["merges"])
        raw_content = content.assemble(algorithm, config, n_tokens, records, n_merges, triples)
    except (KeyError, TypeError, ValueError, InputError) as e:
        reason = str(e) if isinstance(e, InputError) else f"{type(e).__name__}: {e}"
        raise InputError(f"{where}: malformed tokreg tokenizer file ({reason[:160]})") from None
    actual = content.check(
        raw_content, claimed, where, claimed_by="the file says", hint="the file was changed or damaged after export"
    )
    if expect_hash is not None and not actual.startswith(expect_hash):
        raise IntegrityError(f"{where}: its content is {actual}, expected {expect_hash}")
    merges = array(content.U32_CODE)
    merges.frombytes(triples)
    if sys.byteorder == "big":
        merges.byteswap()
    return TokregFile(str(doc.get("ref") or where), actual, raw_content, merges)
