"""The registry page (`/`): every version with its algorithm, vocab size, hash, aliases, date
and source, filtered by a search box and an algorithm, sorted by any column."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ... import algorithms
from ...errors import InputError
from ...registry import Registry
from ..http import blocking, choice, form, one, respond

SORTS = ("name", "created", "vocab", "algorithm", "source")
ORDERS = ("asc", "desc")


def _title(stored_as: str, config: dict[str, Any]) -> str:
    try:
        return algorithms.of(stored_as, config).model.title
    except InputError:  # written by a newer tokreg: still listed, by its stored name
        return stored_as


def listing(reg: Registry, q: str, algorithm: str, sort: str, order: str) -> dict[str, Any]:
    aliases = reg.aliases_by_ref()
    rows = []
    for v in reg.versions():
        row = algorithms.version_json(v)
        row["title"] = _title(v.algorithm, v.config)
        row["aliases"] = aliases.get(v.ref, [])
        rows.append(row)
    titles = sorted({r["title"] for r in rows})
    total = len(rows)
    if algorithm:
        rows = [r for r in rows if r["title"] == algorithm]
    if q:
        needle = q.lower()
        rows = [
            r
            for r in rows
            if any(
                needle in str(x).lower()
                for x in (r["ref"], r["title"], r["hash"], r["sha256"], r["source"], r["message"] or "", *r["aliases"])
            )
        ]
    key = {
        "name": lambda r: (r["name"], r["version"]),
        "created": lambda r: (r["created_at"], r["name"], r["version"]),
        "vocab": lambda r: (r["vocab_size"], r["name"], r["version"]),
        "algorithm": lambda r: (r["title"], r["name"], r["version"]),
        "source": lambda r: (r["source"], r["name"], r["version"]),
    }[sort]
    rows.sort(key=key, reverse=order == "desc")
    return {
        "registry": reg.location,
        "filter": {"q": q, "algorithm": algorithm},
        "sort": sort,
        "order": order,
        "algorithms": titles,
        "total": total,
        "versions": rows,
    }


async def page(request: Request) -> Response:
    p = await form(request)
    sort, order = choice(p, "sort", SORTS), choice(p, "order", ORDERS)
    data = await blocking(listing, request.app.state.reg, one(p, "q").strip(), one(p, "algorithm"), sort, order)
    return respond(request, "registry.html", data)


routes = [Route("/", page)]
