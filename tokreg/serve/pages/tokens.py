"""The token table (`/v/REF/tokens`: paged, searchable by text or id, filtered by kind, sorted
by id, count, score or length) and a token's page (`/v/REF/tokens/ID`: its merge ancestry down
to base tokens, with the rank and count at which each merge was chosen, and every version
holding the same bytes)."""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...data import TokenRow
from ...registry import Registry
from ...store.reads import TOKEN_ORDERS
from ...versions.ancestry import TokenNode
from .. import limits, show
from ..http import blocking, choice, form, number, one, respond
from ..summaries import Summaries

PAGE_SIZE = 100


def row(t: TokenRow) -> dict[str, Any]:
    return {
        "id": t.id,
        "bytes": t.bytes,
        "text": t.text,
        "segments": show.segments(t.bytes),
        "partial": not show.is_utf8(t.bytes),
        "kind": t.kind,
        "count": t.count,
        "score": t.score,
    }


def table(
    reg: Registry, summaries: Summaries, ref: str, q: str, kind: str, order: str, page: int, per: int
) -> dict[str, Any]:
    info = summaries.get(ref)
    total, rows = reg.tokens(
        info.version, contains=q or None, kind=kind or None, order=order, offset=(page - 1) * per, limit=per
    )
    pages = max(1, -(-total // per))
    if page > pages:
        raise HTTPException(404, f"{info.ref} has {pages} page(s) of {per} matching tokens, not {page}")
    return {
        "ref": info.ref,
        "title": info.title,
        "vocab_size": info.version.vocab_size,
        "kinds": sorted(info.summary.tokens_by_kind),
        "score_label": info.score_label,
        "query": {"q": q, "kind": kind, "sort": order, "page": page, "per": per},
        "total": total,
        "pages": pages,
        "tokens": [row(t) for t in rows],
    }


def _node(n: TokenNode) -> dict[str, Any]:
    return {
        "id": n.id,
        "bytes": n.bytes,
        "text": n.text,
        "kind": n.kind,
        "merge": n.merge.to_json() if n.merge is not None else None,
        "segments": show.segments(n.bytes),
        "children": [_node(c) for c in n.children],
    }


def token(reg: Registry, summaries: Summaries, ref: str, token_id: int) -> dict[str, Any]:
    found = reg.token(ref, token_id)
    v = found.version
    return {
        "ref": v.ref,
        "title": summaries.get(v.ref).title,
        "token": row(found.token),
        "merges_in_tree": found.merges,
        "ancestry": _node(found.tree),
        "also_in": [h.to_json() for h in found.also_in],
    }


async def table_page(request: Request) -> Response:
    p = await form(request)
    q = one(p, "q")
    if len(q) > 200:
        q = q[:200]
    data = await blocking(
        table,
        request.app.state.reg,
        request.app.state.summaries,
        request.path_params["ref"],
        q,
        one(p, "kind"),
        choice(p, "sort", TOKEN_ORDERS),
        number(p, "page", 1, 1, 10_000_000),
        number(p, "per", PAGE_SIZE, 1, limits.MAX_PAGE_SIZE),
    )
    return respond(request, "tokens.html", data)


async def token_page(request: Request) -> Response:
    raw = request.path_params["id"]
    if not raw.isascii() or not raw.isdigit() or len(raw) > 9:
        raise HTTPException(404, f"token ids are whole numbers, not {raw[:40]!r}")
    state = request.app.state
    data = await blocking(token, state.reg, state.summaries, request.path_params["ref"], int(raw))
    return respond(request, "token.html", data)


routes = [Route("/v/{ref}/tokens", table_page), Route("/v/{ref}/tokens/{id}", token_page)]
