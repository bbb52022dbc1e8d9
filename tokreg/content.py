"""The canonical content of a tokenizer and its hash: one label for everything that changes
how a tokenizer encodes.

Canonical serialization (format `tokreg-content-v1`), in this order:

1. the line ``tokreg-content-v1\\n``;
2. ``{"algorithm": ..., "config": ...}`` as JSON with sorted keys (at every level), no spaces
   (separators ``,`` and ``:``), non-ASCII characters as themselves (UTF-8, not ``\\u``
   escapes), then ``\\n``; `algorithm` is ``bpe`` (byte-level, character and SentencePiece BPE),
   ``wordpiece`` or ``unigram``, and `config` is the version's `config` (the `versions.config`
   column): the pattern, normalization, flags, template and special-token settings;
3. ``tokens N\\n`` (N in decimal, as in step 4) then, for each token in id order: id (u32 LE),
   length of kind (u16 LE), kind (ASCII, e.g. ``byte``, ``merged``, ``special``), length of
   bytes (u32 LE), bytes, then ``\\x00`` (no score) or ``\\x01`` + the score (f64 LE);
4. ``merges M\\n`` then, for each merge in rank order: left, right, result (u32 LE each), and
   nothing after them. Only BPE encodes by its merges; WordPiece (greedy longest match) and
   Unigram (Viterbi) encode from the vocabulary alone, so their merges are not hashed (the line
   is ``merges 0\\n`` whatever they recorded), and the same vocabulary imported from a
   vocab.txt or a tokenizer.json hashes the same as the trained version.

Training counts, times and messages are not part of it: they do not change encoding.
The hash is ``xxh3-128:<32 lowercase hex>`` (XXH3 128-bit, seed 0) of those bytes; the
sha256 label beside it is ``sha256:<64 lowercase hex>`` of the same bytes.
tests/test_content_format.py builds these bytes by hand from this description.
Same content, same hash, on any machine. The content is also what an encoder is compiled
from, so whatever is hashed is exactly what encodes.

One writer, one reader: `serialize` below writes the format, its token records through the
core's record writer (`content::push_record` in src/content.rs, which the core's reader of tokreg
files, src/tokreg_file.rs, also writes the records of the file it reads with; `assemble` adds the
rest); src/content.rs reads it, for the encoders and, through `header` and `rows` below, for
Python.
"""

from __future__ import annotations

import importlib
import json
import sys
from array import array
from collections.abc import Iterable, Sequence
from typing import Any, Optional

from . import _core
from .errors import InputError, IntegrityError

FORMAT = "tokreg-content-v1"
PREFIX = "xxh3-128:"

#: The array type code of a 4-byte unsigned int on this platform.
U32_CODE = "I" if array("I").itemsize == 4 else "L"


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def serialize(
    algorithm: str,
    config: dict[str, Any],
    tokens: Iterable[tuple[int, str, bytes, Optional[float]]],
    merges: Sequence[tuple[int, int, int]],
) -> bytes:
    """The canonical bytes of a tokenizer. `tokens`: (id, kind, bytes, score) in id order;
    `merges`: (left, right, result) in rank order."""
    rows = list(tokens)
    ids, kinds, raws, scores = (list(c) for c in zip(*rows)) if rows else ([], [], [], [])
    return serialize_columns(algorithm, config, ids, kinds, raws, scores, merges)


def serialize_columns(
    algorithm: str,
    config: dict[str, Any],
    ids: Sequence[int],
    kinds: Sequence[str],
    raws: Sequence[bytes],
    scores: Sequence[Optional[float]],
    merges: Sequence[tuple[int, int, int]] = (),
    *,
    merge_columns: Optional[tuple[Sequence[int], Sequence[int], Sequence[int]]] = None,
) -> bytes:
    """`serialize` of tokens given as columns (each in id order), as a trainer hands them over;
    the merges as (left, right, result) triples, or as those three columns (`merge_columns`)."""
    # Content only ever holds u32 ids and finite scores: an imported file with an id past 2^32
    # or an infinite score is refused here, in one place (the core's record writer), with one line.
    try:
        n_tokens, records = _core.content_records(ids, kinds, raws, scores)
        if algorithm != "bpe":
            n_merges, triples = 0, b""
        elif merge_columns is not None:
            n_merges, triples = len(merge_columns[0]), merge_triples(*merge_columns)
        else:
            # Every merge is three little-endian u32: one array for all of them (a 200k-merge
            # version would spend a quarter of a second packing them one by one).
            flat = array(U32_CODE, [x for m in merges for x in m])
            if sys.byteorder == "big":
                flat.byteswap()
            n_merges, triples = len(merges), flat.tobytes()
    except (OverflowError, TypeError, UnicodeEncodeError) as e:
        raise InputError(
            f"a token or merge cannot be stored ({e}): ids must be 0..4294967295 and kinds ASCII"
        ) from None
    return assemble(algorithm, config, n_tokens, records, n_merges, triples)


def merge_triples(left: Sequence[int], right: Sequence[int], result: Sequence[int]) -> bytes:
    """The merges' (left, right, result) little-endian u32 triples from their three columns,
    each put in place in one array (no tuple or list per merge): OverflowError for an id that
    is not a u32, TypeError for one that is not an int."""
    n = len(left)
    if len(right) != n or len(result) != n:
        raise TypeError("the merge columns are not of one length")
    flat = array(U32_CODE, bytes(12 * n))
    for k, col in enumerate((left, right, result)):
        flat[k::3] = col if isinstance(col, array) and col.typecode == U32_CODE else array(U32_CODE, col)
    if sys.byteorder == "big":
        flat.byteswap()
    return flat.tobytes()


def assemble(
    algorithm: str, config: dict[str, Any], n_tokens: int, records: bytes, n_merges: int, triples: bytes
) -> bytes:
    """The canonical bytes from token records and merge triples already in the layout above (the
    core's tokreg-file reader makes them): the header and count lines added, the merges kept
    only for BPE."""
    if algorithm != "bpe":
        n_merges, triples = 0, b""
    return b"".join(
        (
            FORMAT.encode() + b"\n",
            _header_line(algorithm, config) + b"\n",
            f"tokens {n_tokens}\n".encode(),
            records,
            f"merges {n_merges}\n".encode(),
            triples,
        )
    )


#: Content up to this size is hashed with Python's own SHA-256 when OpenSSL is not loaded yet:
#: loading it (hashlib) costs ~4 ms of CPU and ~3.7 MB of resident pages, about what the
#: builtin takes to hash 0.8 MB. A 32k-token version's content is 0.76-1.3 MB (kernel text
#: 1 MB: 0.76; kernel 20 MB 1.13, Python source 1.15, the multilingual mix 1.29), and
#: `tokreg train` hashes it after training, where the run's peak is: up to 2 MiB the builtin
#: costs at most ~3 ms more CPU than loading OpenSSL, and keeps its pages out (kernel 20 MB at
#: 32k: peak median 51.6 -> 48.8 MB over 6 interleaved runs each).
BUILTIN_SHA256_BYTES = 2 << 20


def digest(content: bytes) -> tuple[str, str]:
    """(xxh3-128 label, sha256 label) of canonical bytes."""
    return content_hash(content), "sha256:" + _sha256(content).hexdigest()


def _sha256(content: bytes) -> Any:
    """A SHA-256 of `content` (the same digest whichever implementation makes it)."""
    if len(content) <= BUILTIN_SHA256_BYTES and "hashlib" not in sys.modules:
        for builtin in ("_sha2", "_sha256"):  # CPython's own: `_sha2` from 3.12, `_sha256` before
            try:
                return importlib.import_module(builtin).sha256(content)
            except ImportError:
                continue
    import hashlib  # here: loading a version needs only the xxh3 (OpenSSL's load is not free)

    return hashlib.sha256(content)


def content_hash(content: bytes) -> str:
    """The xxh3-128 label alone (what versions, pins and caches are keyed by)."""
    import xxhash  # here: a load of a cached built encoder hashes nothing

    return PREFIX + xxhash.xxh3_128_hexdigest(content)


def check(
    content: bytes,
    expected: str,
    what: str,
    *,
    claimed_by: str = "its version row says",
    hint: str = "it was changed outside tokreg; run `tokreg verify`",
) -> str:
    """Returns the content's hash label when it equals `expected`; otherwise raises the one
    IntegrityError for a hash mismatch, naming both hashes: "{what}: its content hashes to
    ACTUAL, but {claimed_by} EXPECTED; {hint}"."""
    actual = content_hash(content)
    if actual != expected:
        raise IntegrityError(
            f"{what}: its content hashes to {actual}, but {claimed_by} {expected}; {hint}",
            expected=expected,
            actual=actual,
        )
    return actual


def _header_line(algorithm: str, config: dict[str, Any]) -> bytes:
    return header_line(algorithm, config).encode()


def header_line(algorithm: str, config: dict[str, Any]) -> str:
    """The JSON line content with this algorithm and config starts with (`_core.content_header`)."""
    return canonical_json({"algorithm": algorithm, "config": config})


def check_header(content: bytes, algorithm: str, config: dict[str, Any], expected: str, what: str) -> None:
    """Raises the IntegrityError of `check` when a version row's algorithm and config are not the
    ones inside its (hash-checked) content, naming the hash that content would have with the
    row's settings: the row was edited on its own, and would mislead whoever reads it."""
    line = _core.content_header(content).encode()
    row = _header_line(algorithm, config)
    if line != row:
        body = len(FORMAT) + 1 + len(line) + 1
        check(
            FORMAT.encode() + b"\n" + row + b"\n" + content[body:],
            expected,
            what,
            hint="its version row's algorithm or config was changed outside tokreg; run `tokreg verify`",
        )


def header(content: bytes) -> tuple[str, dict[str, Any]]:
    """(algorithm, config) from the content's JSON line. Only call this on content whose hash
    was checked: then the settings that shape encoding are the hashed ones, never a row that
    could have been edited on its own."""
    try:
        line = _core.content_header(content)
    except InputError as e:
        raise IntegrityError(f"{e}; expected {FORMAT}") from None
    return parse_header(line)


def parse_header(line: str) -> tuple[str, dict[str, Any]]:
    """(algorithm, config) from a content's JSON line (`_core.content_header`)."""
    doc = json.loads(line)
    return str(doc["algorithm"]), dict(doc["config"])


def rows(content: bytes) -> tuple[list[tuple[int, str, bytes, Optional[float]]], list[tuple[int, int, int]]]:
    """The tokens (id, kind, bytes, score) and merges (left, right, result) of canonical content,
    as `serialize` wrote them: what a loaded `Tokenizer` hands to exports (`to_hf`) without a
    registry. Only call this on content whose hash was checked."""
    return _core.content_rows(content)
