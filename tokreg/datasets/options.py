"""`TokenizeOptions`: every choice a `tokreg tokenize` run makes, frozen, recorded whole in the
manifest (`recorded()`), and compared whole when a run resumes in a folder that already holds
part of a dataset: another choice there is refused, never mixed.

The dtype rule: the ids a version can give run from 0 to `id_bound - 1` (its largest token id or
special-token id, plus one; not the number of tokens, which differs when ids have gaps). Up to
65,536 ids fit in `uint16`; beyond, `uint32`, except in the Megatron layout, whose dtype codes
have no unsigned 32-bit type: there `int32` (as Megatron's own preprocessing does).

Documents (`document`): `record` (a JSON Lines record's field, a Parquet row), `file` (a whole
text file), `line` (each non-empty line of a text file, without its line break), `paragraph`
(runs of non-empty lines separated by blank lines, without the final line break). `auto` is
`record` for JSON Lines and Parquet, and `line` for plain text, files and standard input alike:
one document per line is how plain-text corpora are most often laid out (and what `datasets`'
text loader reads), and a line never makes one large file one document over the
--max-document-bytes bound, which `file` would do to a 1 GB corpus.txt. A folder of books or
source files, one document each, says `--document file`; blank-line-separated documents say
`--document paragraph`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Optional

from ..errors import InputError

FORMATS = ("megatron", "bin", "npy")
DOCUMENTS = ("auto", "record", "file", "line", "paragraph")
SPECIALS = ("text", "ids")
ON_BAD = ("fail", "skip")
#: `--shard-tokens` when neither it nor `--shard-bytes` is given: 2**28 ids (512 MiB in uint16).
DEFAULT_SHARD_TOKENS = 1 << 28
#: A document larger than this (UTF-8 bytes) is a bad record: memory stays bounded.
DEFAULT_MAX_DOCUMENT_BYTES = 64 << 20


@dataclass(frozen=True)
class TokenizeOptions:
    """What a run writes. `bos`/`eos`: a special token's text put before/after every document;
    `template`: the version's own template around every document instead; `specials`: special-
    token text inside a document is encoded as `text` (default) or turned into its `ids`;
    `shard_tokens`/`shard_bytes`: a shard is closed after the document that reaches it;
    `shard_of`: (i, n) for part i of n (0-based) of the inputs; `glob`, `field`: as in `tokreg train`;
    `dropout`, `seed`, `method`: a seeded stochastic encoding (encoding/stochastic.py), recorded
    only when `dropout` is not 0, so a deterministic run's manifest is what it always was."""

    format: str = "megatron"
    document: str = "auto"
    bos: Optional[str] = None
    eos: Optional[str] = None
    template: bool = False
    specials: str = "text"
    shard_tokens: int = 0
    shard_bytes: int = 0
    on_bad_record: str = "fail"
    max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES
    glob: Optional[str] = None
    field: Optional[str] = None
    shard_of: Optional[tuple[int, int]] = None
    dropout: float = 0.0
    seed: Optional[int] = None
    method: Optional[str] = None

    def __post_init__(self) -> None:
        for name, allowed in (
            ("format", FORMATS),
            ("document", DOCUMENTS),
            ("specials", SPECIALS),
            ("on_bad_record", ON_BAD),
        ):
            value = getattr(self, name)
            if value not in allowed:
                raise InputError(f"{name.replace('_', '-')} must be one of {', '.join(allowed)}, not {value!r}")
        if self.shard_tokens < 0 or self.shard_bytes < 0:
            raise InputError("--shard-tokens and --shard-bytes must be positive")
        if self.shard_tokens and self.shard_bytes:
            raise InputError("give --shard-tokens or --shard-bytes, not both")
        if self.template and (self.bos or self.eos):
            raise InputError("give --template or --bos/--eos, not both (the template says where its tokens go)")
        if self.max_document_bytes <= 0:
            raise InputError("--max-document-bytes must be positive")
        if self.shard_of is not None:
            i, n = self.shard_of
            if not (n >= 1 and 0 <= i < n):
                raise InputError(f"--shard-of must be I/N with 0 <= I < N, not {i}/{n}")

    def recorded(self) -> dict[str, Any]:
        """Every option, as the manifest records it (and a resumed run must match)."""
        out = asdict(self)
        out["shard_of"] = None if self.shard_of is None else list(self.shard_of)
        if not self.dropout:
            for key in ("dropout", "seed", "method"):
                del out[key]
        return out

    def document_kind(self, source_format: str) -> str:
        """The kind of document an input of this format gives."""
        if self.document != "auto":
            if source_format != "text" and self.document != "record":
                raise InputError(
                    f"--document {self.document} is for text files; JSON Lines and Parquet give one document per record"
                )
            if source_format == "text" and self.document == "record":
                raise InputError("--document record is for JSON Lines and Parquet; text files give file|line|paragraph")
            return self.document
        return "record" if source_format != "text" else "line"


def dtype_for(id_bound: int, fmt: str) -> str:
    """The numpy dtype name of the ids (see the module's docstring for the rule)."""
    if id_bound <= 1 << 16:
        return "uint16"
    return "int32" if fmt == "megatron" else "uint32"


def shard_limit(opts: TokenizeOptions, itemsize: int) -> int:
    """Ids per shard: a shard is closed after the document with which it reaches this many."""
    if opts.shard_bytes:
        return max(1, opts.shard_bytes // itemsize)
    return opts.shard_tokens or DEFAULT_SHARD_TOKENS
