"""The SQL page (`/sql?q=...`): a query box over the same read-only path as `tokreg sql`
(`Registry.sql`), results as a table, and the same result as CSV or JSON (`&format=csv|json`).
Each statement runs at most SQL_SECONDS and keeps at most MAX_SQL_ROWS rows (`Registry.sql`'s own
limits: its rows are streamed, so a huge result is never held)."""

from __future__ import annotations

import csv
import io
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...errors import InputError, TokregError
from ...registry import Registry
from ...store.readonly_sql import QueryTimeout
from .. import limits
from ..http import blocking, form, one, respond, status_of, wants_json

EXAMPLES = (
    (
        "Every version",
        "SELECT name, number, algorithm, vocab_size, source, created_at FROM versions ORDER BY name, number",
    ),
    (
        "The most used tokens of a version",
        "SELECT id, text, count FROM vocab WHERE tokenizer = '{ref}' ORDER BY count DESC LIMIT 20",
    ),
    (
        "The first merges, readable",
        "SELECT rank, left_text, right_text, result_text, count FROM merges_view WHERE tokenizer = '{ref}' "
        "ORDER BY rank LIMIT 20",
    ),
    ("Token counts by version and kind", "SELECT tokenizer, kind, count(*) AS n FROM vocab GROUP BY tokenizer, kind"),
    ("Alias moves", "SELECT name, alias, old_version, new_version, at FROM alias_events ORDER BY at"),
)


def _cell(v: Any) -> Any:
    if isinstance(v, (bytes, memoryview)):
        return "0x" + bytes(v).hex()
    return v


def query(reg: Registry, q: str) -> dict[str, Any]:
    try:
        cols, rows = reg.sql(q, timeout=limits.SQL_SECONDS, limit=limits.MAX_SQL_ROWS + 1)
    except QueryTimeout:
        raise InputError(
            f"the query ran past the limit of {limits.SQL_SECONDS:g} s and was stopped; narrow it with WHERE or LIMIT"
        ) from None
    truncated = len(rows) > limits.MAX_SQL_ROWS
    rows = rows[: limits.MAX_SQL_ROWS]
    return {"query": q, "columns": cols, "rows": [[_cell(c) for c in r] for r in rows], "truncated": truncated}


def _csv(data: dict[str, Any]) -> Response:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(data["columns"])
    w.writerows([["" if c is None else c for c in r] for r in data["rows"]])
    return Response(
        buf.getvalue(),
        media_type="text/csv; charset=utf-8",
        headers={"content-disposition": 'attachment; filename="tokreg-query.csv"'},
    )


async def page(request: Request) -> Response:
    p = await form(request)
    q = one(p, "q").strip()
    if len(q) > limits.MAX_SQL_CHARS:
        raise InputError(f"the query is {len(q):,} characters; the limit is {limits.MAX_SQL_CHARS:,}")
    reg = request.app.state.reg
    versions = await blocking(reg.versions)
    example_ref = versions[-1].ref if versions else "NAME@1"
    data: dict[str, Any] = {"query": q, "columns": [], "rows": [], "truncated": False, "error": None}
    status = 200
    as_csv = one(p, "format") == "csv"
    if q:
        try:
            data.update(await blocking(query, reg, q))
        except TokregError as e:
            if as_csv or wants_json(request):
                raise
            data["error"], status = str(e), status_of(e)  # shown under the query box, which keeps the query
    if as_csv:
        return _csv(data)
    data["limits"] = {"rows": limits.MAX_SQL_ROWS, "rows_shown": limits.SQL_ROWS_SHOWN, "seconds": limits.SQL_SECONDS}
    data["examples"] = [{"title": t, "query": s.format(ref=example_ref)} for t, s in EXAMPLES]
    return respond(request, "sql.html", data, status=status)


routes = [Route("/sql", page, methods=["GET", "POST"])]
