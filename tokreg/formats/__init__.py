"""Import and export of the formats people already have: tiktoken `.tiktoken`, Hugging Face
`tokenizer.json`, SentencePiece `.model`, and tokreg's own single-file format. One module per
format; each reads into / writes from the plain `TokenizerData` shape.

`export` is the one entry for writing a stored version: it reads the rows back as
`TokenizerData`, refuses content that no longer has its recorded hash, and hands it to the
writer named in `EXPORTERS`.
"""

from __future__ import annotations

import os
from typing import Callable

from sqlalchemy import Connection

from ..errors import InputError, IntegrityError
from ..result import MergeRow, TokenizerData, TokenRow
from ..versions import VersionInfo, load_rows, resolve


def _tokreg(data: TokenizerData, ref: str) -> bytes:
    from .. import tokfile

    return tokfile.dumps(data, ref)


def _hf(data: TokenizerData, ref: str) -> bytes:
    from . import hf

    if data.config.get("model") == "sentencepiece":
        raise InputError(
            f"{ref} is a SentencePiece BPE model (score-ordered merges), which has no tokenizer.json form "
            "here; export it with --format tokreg"
        )
    return hf.export(data, ref)


def _tiktoken(data: TokenizerData, ref: str) -> bytes:
    from . import tiktoken_file

    if data.algorithm != "bpe" or not data.config.get("byte_level"):
        raise InputError(f"{ref} is not byte-level BPE; a .tiktoken file holds byte-level ranks only")
    return tiktoken_file.dumps([(t.id, t.bytes, t.kind) for t in data.tokens])


# format name -> writer(data, ref) -> file bytes
EXPORTERS: dict[str, Callable[[TokenizerData, str], bytes]] = {
    "tokreg": _tokreg,
    "hf": _hf,
    "tiktoken": _tiktoken,
}


def stored_data(conn: Connection, v: VersionInfo) -> TokenizerData:
    """A version's rows as `TokenizerData`, checked against its recorded hash."""
    tokens, merges = load_rows(conn, v.id)
    data = TokenizerData(
        algorithm=v.algorithm,
        config=v.config,
        source=v.source,
        tokens=[TokenRow(id=i, bytes=b, kind=k, score=s) for i, b, k, s in tokens],
        merges=[MergeRow(rank=r, left=a, right=b, result=z) for r, (a, b, z) in enumerate(merges)],
    )
    actual, _ = data.hashes()
    if actual != v.content_hash:
        raise IntegrityError(
            f"{v.ref}: the stored content hashes to {actual}, not its recorded {v.content_hash}; "
            "refusing to export damaged content (run `tokreg verify`)"
        )
    return data


def export(conn: Connection, ref: str, fmt: str) -> tuple[VersionInfo, bytes]:
    """(version, file bytes) of `ref` written in format `fmt`."""
    writer = EXPORTERS.get(fmt)
    if writer is None:
        raise InputError(f"unknown export format {fmt!r}; choose one of {', '.join(sorted(EXPORTERS))}")
    v = resolve(conn, ref)
    return v, writer(stored_data(conn, v), v.ref)


def write_file(path: str | os.PathLike[str], raw: bytes) -> None:
    """Writes `raw` to `path` whole or not at all (a temp file, then a rename)."""
    tmp = f"{os.fspath(path)}.tmp"
    try:
        with open(tmp, "wb") as fh:
            fh.write(raw)
        os.replace(tmp, path)
    except OSError as e:
        raise InputError(f"cannot write {os.fspath(path)!r}: {e.strerror}") from None
