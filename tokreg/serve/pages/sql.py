"""The SQL page (`/sql`): a query box over the same read-only path as `tokreg sql`
(`Registry.sql`), results as a table, and the same result as CSV or JSON (`format=csv|json`).
Each statement runs at most SQL_SECONDS and keeps at most MAX_SQL_ROWS rows (`Registry.sql`'s own
limits: its rows are streamed, so a huge result is never held).

A query runs only from a POST (the page's form, with its form token, or a script's JSON body:
`POST /sql?format=json` with `{"q": "SELECT ..."}`), admitted like any heavy request (work.py),
so a link or an image on another site cannot run one. A GET shows the form, filled in with
`?q=` when given, and never runs it. On PostgreSQL the page and its JSON say (`warning`) when
the registry's role could do more than read."""

from __future__ import annotations

import csv
import io
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...errors import InputError, TokregError
from ...registry import Registry
from ...store.readonly_sql import QueryTimeout
from .. import limits
from ..http import Json, blocking, form, one, respond, status_of, wants_json
from ..work import Deadline

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


def query(reg: Registry, q: str, deadline: Deadline) -> dict[str, Any]:
    """The result of `q`; its own statement timeout (SQL_SECONDS, inside the heavy budget) bounds it."""
    deadline.check()  # admitted late (it waited its turn): nothing is started past the budget
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


RUN_BY_POST = (
    "GET /sql never runs a query (a link or an image on another site could); POST it: "
    """curl -X POST 'URL/sql?format=json' -H 'content-type: application/json' -d '{"q": "SELECT 1"}'"""
)


async def page(request: Request) -> Response:
    p = await form(request)
    q = one(p, "q").strip()
    if len(q) > limits.MAX_SQL_CHARS:
        raise InputError(f"the query is {len(q):,} characters; the limit is {limits.MAX_SQL_CHARS:,}")
    run = request.method == "POST" and bool(q)
    as_csv = one(p, "format") == "csv"
    as_json = wants_json(request) or one(p, "format") == "json"  # the page's download buttons post format
    if q and not run and (as_csv or as_json):
        raise HTTPException(405, RUN_BY_POST, headers={"allow": "GET, POST"})
    reg = request.app.state.reg
    versions = await blocking(reg.versions)
    example_ref = versions[-1].ref if versions else "NAME@1"
    data: dict[str, Any] = {
        "query": q,
        "ran": run,
        "columns": [],
        "rows": [],
        "truncated": False,
        "error": None,
        "warning": request.app.state.role_warning,
    }
    status = 200
    if run:
        try:
            data.update(await request.app.state.work.run(request, query, reg, q))
        except TokregError as e:
            if as_csv or as_json:
                return Json({"error": str(e), "status": status_of(e)}, status_code=status_of(e))
            data["error"], status = str(e), status_of(e)  # shown under the query box, which keeps the query
    if as_csv:
        return _csv(data)
    data["limits"] = {"rows": limits.MAX_SQL_ROWS, "rows_shown": limits.SQL_ROWS_SHOWN, "seconds": limits.SQL_SECONDS}
    data["examples"] = [{"title": t, "query": s.format(ref=example_ref)} for t, s in EXAMPLES]
    if as_json:
        return Json(data, status_code=status)
    # The twin is the form's JSON: a GET with ?q= never runs (405), and a POST's result is its answer.
    return respond(request, "sql.html", data, status=status, twin="/sql?format=json")


routes = [Route("/sql", page, methods=["GET", "POST"])]
