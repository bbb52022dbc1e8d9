"""`tokreg sql`: a read-only query, printed as a table, JSON or CSV."""

from __future__ import annotations

import csv
import io
from typing import Optional

import click

from .common import cell, db_option, echo_json, echo_table, json_option, open_registry


@click.command()
@click.argument("query")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV.")
@json_option
@db_option
def sql(query: str, as_csv: bool, as_json: bool, db: Optional[str]) -> None:
    """Run a read-only SQL query against the registry (tables, and the views vocab and merges_view).

    \b
    Example:
        tokreg sql "SELECT text, count FROM vocab WHERE tokenizer = 'gpt-mini@1' ORDER BY count DESC LIMIT 20"
    """
    cols, rows = open_registry(db).sql(query)
    if as_json:
        echo_json([dict(zip(cols, r)) for r in rows])
    elif as_csv:
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(cols)
        w.writerows([[cell(c) for c in r] for r in rows])
        click.echo(buf.getvalue(), nl=False)
    else:
        echo_table(cols, rows)
