"""The diff page (`/diff?a=A&b=B`): what `tokreg diff` reports, drawn (added and removed tokens,
merge divergence, score changes, config changes); with a text (POSTed from the page's form), the
tokens per byte of each and the words that segment differently, side by side."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Optional
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ... import diff
from ...registry import Registry
from .. import limits
from ..encoding import Encoders
from ..http import blocking, form, number, one, respond, text_param

#: Diffs of stored versions, by (hash A, hash B, top): versions never change, so neither do they.
_cache: OrderedDict[tuple[str, str, int], dict[str, Any]] = OrderedDict()
_cache_lock = threading.Lock()
_CACHE_SIZE = 16


def _stored_diff(reg: Registry, a: str, b: str, top: int) -> dict[str, Any]:
    va, vb = reg.resolve(a), reg.resolve(b)
    key = (va.content_hash, vb.content_hash, top)
    with _cache_lock:
        hit = _cache.get(key)
    if hit is None or hit["a"]["ref"] != va.ref or hit["b"]["ref"] != vb.ref:
        hit = reg.diff(va.ref, vb.ref, top=top)
        with _cache_lock:
            _cache[key] = hit
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
    return dict(hit)


def _defaults(reg: Registry) -> tuple[str, str]:
    """The two newest versions of the name with the newest version, else the two newest."""
    vs = sorted(reg.versions(), key=lambda v: (v.created_at, v.id))
    if not vs:
        return "", ""
    same = [v for v in vs if v.name == vs[-1].name]
    pair = same[-2:] if len(same) >= 2 else vs[-2:]
    return (pair[0].ref, pair[-1].ref)


def compare(reg: Registry, encoders: Encoders, a: str, b: str, text: str, top: int) -> dict[str, Any]:
    refs = [v.ref for v in reg.versions()]
    if not a and not b:
        a, b = _defaults(reg)
    out: dict[str, Any] = {"versions": refs, "picked": {"a": a, "b": b}, "text_given": bool(text), "diff": None}
    if a and b:
        d = _stored_diff(reg, a, b, top)
        if text:
            d["text"] = diff.text_effect(encoders.get(a), encoders.get(b), [("your text", text)], top=top)
        out["diff"] = d
    return out


async def page(request: Request) -> Response:
    p = await form(request)
    text: Optional[str] = text_param(p, "text")
    top = number(p, "top", 20, 1, limits.MAX_TOP)
    state = request.app.state
    data = await blocking(compare, state.reg, state.encoders, one(p, "a").strip(), one(p, "b").strip(), text or "", top)
    data["text"] = text
    data["top"] = top
    picked = urlencode({**data["picked"], "top": top, "format": "json"})
    return respond(request, "diff.html", data, twin=f"/diff?{picked}" if request.method == "POST" else None)


routes = [Route("/diff", page, methods=["GET", "POST"])]
