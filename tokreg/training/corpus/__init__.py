"""Reading a training corpus as a stream: the value a run is given (`Corpus`), what the inputs
are (`sources`), how their bytes come out (`decompress`, `records`), what a run records of them
(`fingerprint`), and the loop that feeds them to a counter in chunks (`reader`).

An input is a file, a folder (every file under it, recursively, filtered by `glob`), `-` for
standard input, or (from Python) any iterable of strings. Files compressed with gzip, xz or
zstd are read decompressed, whatever their name; JSON Lines (`.jsonl`, `.ndjson`) and Parquet
(`.parquet`) files give the text of one field per record (`field`, default `text`).
"""

from __future__ import annotations

from .corpus import Corpus
from .fingerprint import fingerprint, source_record
from .reader import ReadResult, read_into
from .sources import Source, expand

__all__ = ["Corpus", "ReadResult", "Source", "expand", "fingerprint", "read_into", "source_record"]
