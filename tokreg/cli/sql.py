"""`tokreg sql`: one read-only query, printed as a table, JSON or CSV. Rows are streamed: CSV
and JSON print every row as it arrives, the table stops at --max-rows (it needs every row it
shows to size its columns) and says so."""

from __future__ import annotations

import csv
import itertools
import json
import sys
from collections.abc import Sequence
from typing import Optional

import click

from ..store.privileges import role_warning
from .common import cell, db_option, echo_table, json_default, open_registry


def unique_names(columns: Sequence[str]) -> list[str]:
    """Column names made unique for JSON objects: a repeated name gets `_2`, `_3`, … (skipping
    the names of other columns), so no column is lost."""
    out: list[str] = []
    for c in columns:
        name, n = c, 1
        while name in out or (name != c and name in columns):
            n += 1
            name = f"{c}_{n}"
        out.append(name)
    return out


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("query")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV (every row, streamed).")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print a JSON array of objects (every row, streamed); a repeated column name gets _2, _3, ….",
)
@click.option(
    "--timeout",
    type=float,
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="Stop the query after this much database time (0: no limit).",
)
@click.option(
    "--max-rows", type=int, default=1000, show_default=True, help="Rows the table shows at most (0: no limit)."
)
@db_option
def sql(query: str, as_csv: bool, as_json: bool, timeout: float, max_rows: int, db: Optional[str]) -> None:
    """Run one read-only SQL query against the registry (tables, and the views vocab and merges_view).

    A query may start with a comment (`-- ...`). Ctrl-C stops it at once. It may read tokreg's
    tables and views and call the functions of an allow-list (docs/sql.md); anything else is
    refused in one line.

    \b
    Example:
        tokreg sql "SELECT text, count FROM vocab WHERE tokenizer = 'gpt-mini@1' ORDER BY count DESC LIMIT 20"
    """
    reg = open_registry(db)
    with reg.sql_rows(query, timeout=timeout or None) as rows:
        # Said once, after the query was accepted, on stderr (stdout may be CSV or JSON).
        warning = role_warning(reg.engine)
        if warning is not None:
            click.echo(f"tokreg: warning: {warning}", err=True)
        if as_json:
            names = unique_names(rows.columns)
            out = sys.stdout
            out.write("[")
            n = 0
            for n, r in enumerate(rows, 1):
                out.write(",\n  " if n > 1 else "\n  ")
                out.write(json.dumps(dict(zip(names, r)), ensure_ascii=False, default=json_default))
            out.write("\n]\n" if n else "]\n")
        elif as_csv:
            w = csv.writer(sys.stdout)
            w.writerow(rows.columns)
            for r in rows:
                w.writerow([cell(c) for c in r])
        else:
            shown = list(itertools.islice(rows, max_rows or None))
            more = max_rows > 0 and next(rows, None) is not None
            echo_table(rows.columns, shown)
            if more:
                click.echo(
                    f"(the table stops at {max_rows:,} rows and more rows exist; add LIMIT/OFFSET, raise --max-rows, "
                    "or use --csv / --json, which stream every row)",
                    err=True,
                )
