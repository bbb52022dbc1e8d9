"""The text of record files: one field per record of a JSON Lines or Parquet file, each
record's text one line of the corpus (a final newline added when it has none).

JSON Lines: a line that is not a JSON object, or an object without the field, or whose field
is not a string, is an error naming the file, the line number and what to do. Parquet needs
`pyarrow` (`pip install 'tokreg[parquet]'`); its field must be a string column.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Optional

from ...errors import InputError

#: Records per batch handed to the counter.
BATCH_BYTES = 4 << 20


def _line_text(value: str) -> str:
    return value if value.endswith("\n") else value + "\n"


def record_text(line: bytes, n: int, where: str, field: str) -> str:
    """The text of `field` in one JSON Lines record (line number `n`), or InputError naming
    the file, the line and what is wrong with it."""
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(f"{where} line {n} is not JSON ({e.msg}); is it a JSON Lines file?") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{where} line {n} is not UTF-8 ({e.reason}); convert the file to UTF-8") from None
    if not isinstance(rec, dict) or field not in rec:
        keys = ", ".join(list(rec)[:5]) if isinstance(rec, dict) else type(rec).__name__
        raise InputError(f"{where} line {n} has no field {field!r} (it has: {keys}); name the field with --field")
    value = rec[field]
    if not isinstance(value, str):
        raise InputError(f"{where} line {n}: field {field!r} is {type(value).__name__}, not a string")
    return value


def jsonl_chunks(stream: IO[bytes], where: str, field: str, raw_sink: list[bytes]) -> Iterator[bytes]:
    """Text chunks of a JSON Lines stream; every raw line read is appended to `raw_sink` (for
    the fingerprint, which covers the file's bytes, not the extracted text)."""
    out: list[str] = []
    size = 0
    for n, line in enumerate(stream, 1):
        raw_sink.append(line)
        if not line.strip():
            continue
        text = _line_text(record_text(line, n, where, field))
        out.append(text)
        size += len(text)
        if size >= BATCH_BYTES:
            yield "".join(out).encode("utf-8", "surrogatepass")
            out, size = [], 0
    if out:
        yield "".join(out).encode("utf-8", "surrogatepass")


def _unreadable(where: str, e: Exception) -> InputError:
    first = (str(e).strip().splitlines() or [type(e).__name__])[0]
    return InputError(f"{where} is not a readable Parquet file ({first[:200]}); check the file or convert it again")


def parquet_values(path: str, where: str, field: str) -> Iterator[list[Optional[str]]]:
    """The values of one string column of a Parquet file, a row group batch at a time (None
    for a null)."""
    try:
        import pyarrow.parquet as pq  # type: ignore[import-not-found,import-untyped,unused-ignore]  # optional: Parquet only
    except ImportError:
        raise InputError(f"{where} is Parquet; install the parquet extra: pip install 'tokreg[parquet]'") from None
    try:
        pf = pq.ParquetFile(path)
        names = pf.schema_arrow.names
    except Exception as e:  # pyarrow raises its own exception types for damaged files
        raise _unreadable(where, e) from None
    if field not in names:
        raise InputError(f"{where} has no column {field!r} (it has: {', '.join(names[:8])}); name it with --field")
    batches = pf.iter_batches(columns=[field], batch_size=8192)
    while True:
        try:
            batch = next(batches, None)
        except Exception as e:  # a damaged page or row group, found only when it is read
            raise _unreadable(where, e) from None
        if batch is None:
            return
        values = batch.column(0).to_pylist()
        if values and not all(isinstance(v, str) or v is None for v in values):
            raise InputError(f"{where}: column {field!r} is not a string column")
        yield values


def parquet_chunks(path: str, where: str, field: str) -> Iterator[bytes]:
    """Text chunks of one string column of a Parquet file, a row group batch at a time."""
    for values in parquet_values(path, where, field):
        text = "".join(_line_text(v) for v in values if v is not None)
        if text:
            yield text.encode("utf-8", "surrogatepass")
