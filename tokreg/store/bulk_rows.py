"""One version's rows of a table (tokens, merges) inserted straight through a database driver,
many rows per statement: the registry's writer (writer.py, through SQLAlchemy's connection)
and the lean write of `tokreg train` (sqlite_write.py, through the sqlite3 module) both insert
with `insert`, so both store the same values the same way.

Binding a value is what a row costs, more than SQLite's B-trees (tokens and merges are 400k
rows for a 200k-token version; into an in-memory table without any index they took 0.8 s of
CPU, into the registry's tables about as much): SQLAlchemy's per-row processing cost most, so
the rows go to the driver as they are; the driver's executemany runs the statement once per
row, so a few hundred rows share one statement (`INSERT ... VALUES (...), (...), ...`); and
every bound value costs, a None or bytes most (the sqlite3 module looks for an adapter for
each), so `version_id`, the same in every row, is written into the statement as a number, and
a column that is None in every row (counts and scores of an imported vocabulary) is left out,
so it takes its default, NULL. For a 200k-token import: 1.2 -> 0.5 s of CPU.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Any, Callable, Union

from ..data import ParityRecord, Rows, TokenizerData, column, texts_of

#: Columns that may be None in every row of a version (counts and scores of an imported
#: vocabulary): then they are left out of its INSERTs, and read NULL.
NULLABLE = frozenset({"count", "score", "left_count", "right_count", "stage", "ios"})
#: Parameters per multi-row INSERT: far below SQLite's 32,766 and PostgreSQL's 65,535.
PARAMS = 4_000


def insert(
    execute: Callable[[str, tuple[Any, ...]], Any],
    table: str,
    version_id: int,
    columns: Mapping[str, Column],
    mark: str = "?",
    *,
    sqlite: bool = False,
) -> None:
    """Inserts the rows of version `version_id` given as `columns` (each column's values in row
    order: plain ints, floats, str, bytes or None; a list, an array, a range, or `Derived`)
    with `execute(statement, parameters)`; `mark` is the driver's parameter mark; `sqlite`: the
    driver is the sqlite3 module."""
    names = [c for c, values in columns.items() if c not in NULLABLE or values.count(None) < len(values)]
    n = min((len(columns[c]) for c in names), default=0)
    if not n:
        return
    one = "(" + ", ".join([str(int(version_id))] + [mark for _ in names]) + ")"
    head = f"INSERT INTO {table} ({', '.join(['version_id', *names])}) VALUES "
    per = max(1, PARAMS // len(names))
    full = head + ", ".join([one] * per)
    # The rows (and derived columns, and for the sqlite3 module the tokens' bytes as
    # bytearrays) are made a statement's worth at a time: a tuple per row, or a text per token,
    # for all of them at once (64k for a 32k-token version) was a few MB at the run's peak.
    # sqlite3 binds a bytearray as a BLOB at once but looks for an adapter for each bytes value
    # first (a third of what binding the tokens cost); the BLOB stored is the same.
    # A statement's parameters, row after row, are put in place a column at a time (a slice
    # assignment per column instead of a tuple per row: 1.6-2.6 ms less CPU for 42-64k rows).
    blob = [sqlite and c == "bytes" for c in names]
    values = [columns[c] for c in names]
    width = len(names)
    for start in range(0, n, per):
        stop = min(n, start + per)
        flat: list[Any] = [None] * ((stop - start) * width)
        for i, (v, b) in enumerate(zip(values, blob)):
            part = _part(v, start, stop)
            flat[i::width] = list(map(bytearray, part)) if b else part
        statement = full if stop - start == per else head + ", ".join([one] * (stop - start))
        execute(statement, tuple(flat))


class Derived:
    """A column made from another as the rows are inserted, a statement's worth at a time:
    `make(source[i:j])` gives the values of rows i..j (e.g. the tokens' texts from their
    bytes, `data.texts_of`), so that they are never all held at once."""

    __slots__ = ("make", "source")

    def __init__(self, make: Callable[[Sequence[Any]], Sequence[Any]], source: Sequence[Any]):
        self.make = make
        self.source = source

    def __len__(self) -> int:
        return len(self.source)

    def count(self, value: Any) -> int:  # a derived column is never left out (see NULLABLE)
        return sum(1 for x in self.make(self.source) if x == value)


#: A column's values in row order, or a column made from another as the rows are inserted.
Column = Union[Sequence[Any], Derived]


def _part(values: Column, start: int, stop: int) -> Sequence[Any]:
    if isinstance(values, Derived):
        return values.make(values.source[start:stop])
    return values[start:stop]


def _columns(objs: Sequence[Any], attrs: dict[str, str]) -> dict[str, Sequence[Any]]:
    """Each column (key) as the values of its attribute (value) of every object: the columns a
    trainer handed over, as they are, when the rows are `Rows` (no row object made, no copy; a
    field it did not give is None in every row, and left out here, as `insert` would)."""
    if isinstance(objs, Rows):
        return {name: objs.column(attr) for name, attr in attrs.items() if objs.given(attr)}
    return {name: list(map(attrgetter(attr), objs)) for name, attr in attrs.items()}


_TOKENS = {"id": "id", "bytes": "bytes", "kind": "kind", "count": "count", "score": "score"}
_MERGES = {"rank": "rank", "left_id": "left", "right_id": "right", "result_id": "result", "count": "count"}
_MERGES.update(score="score", left_count="left_count", right_count="right_count", stage="stage")
_REMOVALS = {"event": "event", "after_rank": "after", "token_id": "token_id", "ios": "ios", "count": "count"}


def of_version(data: TokenizerData) -> list[tuple[str, Mapping[str, Column]]]:
    """(table, columns) of the bulk rows of a version: its tokens and its merges, PickyBPE's
    removal events, and a parity-aware run's languages and per-merge gains."""
    texts: Column = Derived(texts_of, column(data.tokens, "bytes"))
    out: list[tuple[str, Mapping[str, Column]]] = [
        ("tokens", {**_columns(data.tokens, _TOKENS), "text": texts}),
        ("merges", _columns(data.merges, _MERGES)),
    ]
    if data.removals:
        out.append(("removals", _columns(data.removals, _REMOVALS)))
    if data.parity is not None:
        languages, per_merge = _parity(data.parity)
        out.append(("parity_languages", languages))
        if per_merge["rank"]:
            out.append(("parity_merges", per_merge))
    return out


def _parity(rec: ParityRecord) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """(parity_languages, parity_merges) columns of one version: per language its training and
    parallel-set cost; per merge and language the gain and whether the merge went to it."""
    codes = list(rec.languages)
    n = len(codes)
    langs: dict[str, list[Any]] = {
        "language": codes,
        "train_bytes": list(rec.train_bytes),
        "train_tokens": list(rec.train_tokens),
        "dev_bytes": list(rec.dev_bytes) if rec.dev_bytes is not None else [None] * n,
        "dev_tokens": list(rec.dev_tokens) if rec.dev_tokens is not None else [None] * n,
    }
    m = len(rec.chosen)
    merges: dict[str, list[Any]] = {
        "rank": [r for r in range(m) for _ in codes],
        "language": codes * m,
        "gain": list(rec.gains[: m * n]),
        "chosen": [rec.chosen[r] == i for r in range(m) for i in range(n)],
    }
    return langs, merges
