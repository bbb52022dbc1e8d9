"""The diff page (`/diff?a=A&b=B`): what `tokreg diff` reports, drawn (added and removed tokens,
merge divergence, score changes, config changes); with a text (POSTed from the page's form), the
tokens per byte of each and the words that segment differently, side by side. A diff on text is
heavy work (work.py): bounded, and refused for other sites."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...evaluation.evaluate import Text
from ...registry import Registry
from ...versions import diff
from ...versions.diff import VersionDiff
from .. import limits
from ..cache import Lru
from ..encoding import Encoders
from ..http import blocking, form, number, one, respond, text_param
from ..work import Deadline

#: (ref A, hash A, ref B, hash B, top): what a stored diff is kept under.
DiffKey = tuple[str, str, str, str, int]


def _stored_diff(reg: Registry, diffs: Lru[DiffKey, VersionDiff], a: str, b: str, top: int) -> VersionDiff:
    # Keyed by ref and hash: versions never change, so neither do their diffs.
    va, vb = reg.resolve(a), reg.resolve(b)
    key = (va.ref, va.content_hash, vb.ref, vb.content_hash, top)
    return diffs.get(key, lambda: reg.diff(va, vb, top=top))


def _defaults(reg: Registry) -> tuple[str, str]:
    """The two newest versions of the name with the newest version, else the two newest."""
    vs = sorted(reg.versions(), key=lambda v: (v.created_at, v.id))
    if not vs:
        return "", ""
    same = [v for v in vs if v.name == vs[-1].name]
    pair = same[-2:] if len(same) >= 2 else vs[-2:]
    return (pair[0].ref, pair[-1].ref)


def compare(
    reg: Registry,
    encoders: Encoders,
    diffs: Lru[DiffKey, VersionDiff],
    a: str,
    b: str,
    text: str,
    top: int,
    deadline: Optional[Deadline] = None,
) -> dict[str, Any]:
    refs = [v.ref for v in reg.versions()]
    if not a and not b:
        a, b = _defaults(reg)
    out: dict[str, Any] = {"versions": refs, "picked": {"a": a, "b": b}, "text_given": bool(text), "diff": None}
    if a and b:
        d = _stored_diff(reg, diffs, a, b, top)
        if text:
            if deadline:
                deadline.check()
            d = replace(
                d, text=diff.text_effect(encoders.get(a), encoders.get(b), [Text.of("your text", text)], top=top)
            )
        out["diff"] = d.to_json()
    return out


async def page(request: Request) -> Response:
    p = await form(request)
    text: Optional[str] = text_param(p, "text")
    top = number(p, "top", 20, 1, limits.MAX_TOP)
    state = request.app.state
    args = (state.reg, state.encoders, state.diffs, one(p, "a").strip(), one(p, "b").strip(), text or "", top)
    data = await (state.work.run(request, compare, *args) if text else blocking(compare, *args))
    data["text"] = text
    data["top"] = top
    picked = urlencode({**data["picked"], "top": top, "format": "json"})
    return respond(request, "diff.html", data, twin=f"/diff?{picked}" if request.method == "POST" else None)


routes = [Route("/diff", page, methods=["GET", "POST"])]
