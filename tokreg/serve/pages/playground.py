"""The playground (`/playground`): type or paste text, pick one to four versions, see the tokens
coloured side by side. The page's script posts to `/api/encode`, which encodes through the same
`Tokenizer` as `tokreg.load` (encoding.py); `/playground?format=json&v=A&v=B&text=...` is the
same answer for a GET.

Encoding is heavy work (work.py): admitted into a bounded pool, refused for other sites, run and
turned into JSON on a worker thread, so a maximal request never holds the event loop."""

from __future__ import annotations

from typing import Any, Optional

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...errors import InputError
from .. import encoding, limits
from ..http import blocking, form, one, respond, text_param, to_json_in_parts
from ..work import Deadline


def run(
    encoders: encoding.Encoders,
    refs: list[str],
    text: str,
    allow_special: bool,
    deadline: Optional[Deadline] = None,
) -> dict[str, Any]:
    """What the page draws: each version's view of `text` and where they cut it differently."""
    views = []
    for r in refs:
        if deadline:
            deadline.check()
        views.append(encoding.encode(encoders.get(r), text, allow_special=allow_special))
    n_bytes = len(text.encode("utf-8"))
    spans = encoding.disagreements(views, n_bytes)
    return {
        "text": {"bytes": n_bytes, "characters": len(text)},
        "allow_special": allow_special,
        "versions": views,
        "disagreements": [{"start": s, "end": e} for s, e in spans],
    }


def run_json(
    encoders: encoding.Encoders, refs: list[str], text: str, allow_special: bool, deadline: Deadline
) -> Response:
    """`run` as a JSON response, made on the worker thread, in parts (the largest is megabytes)."""
    data = run(encoders, refs, text, allow_special, deadline)
    deadline.check()
    return Response(to_json_in_parts(data), media_type="application/json")


def _refs(params: dict[str, list[str]]) -> list[str]:
    refs = [r.strip() for r in params.get("v", []) + params.get("versions", []) if r.strip()]
    if len(refs) > limits.MAX_VERSIONS:
        raise InputError(f"pick at most {limits.MAX_VERSIONS} versions, not {len(refs)}")
    return refs


def _flag(params: dict[str, list[str]], key: str) -> bool:
    return one(params, key, "false").lower() in ("1", "true", "on", "yes")


async def encode(request: Request) -> Response:
    """POST {"text": ..., "versions": [...], "allow_special": false} -> what the page draws."""
    p = await form(request)
    refs = _refs(p)
    if not refs:
        raise InputError('name at least one version: {"versions": ["NAME@N"], "text": "..."}')
    text = text_param(p, "text")
    state = request.app.state
    res: Response = await state.work.run(request, run_json, state.encoders, refs, text, _flag(p, "allow_special"))
    return res


async def page(request: Request) -> Response:
    p = await form(request)
    refs = _refs(p)
    text = text_param(p, "text")
    reg = request.app.state.reg
    versions = await blocking(reg.versions)
    newest = [max(versions, key=lambda v: (v.created_at, v.id)).ref] if versions else []
    data: dict[str, Any] = {
        "versions": [v.ref for v in versions],
        "picked": refs or newest,
        "text": text,
        "allow_special": _flag(p, "allow_special"),
    }
    if request.query_params.get("format") == "json":
        if not refs:
            raise InputError("name at least one version with v=NAME@N (up to four)")
        state = request.app.state
        res: Response = await state.work.run(request, run_json, state.encoders, refs, text, data["allow_special"])
        return res
    return respond(request, "playground.html", data)


routes = [Route("/playground", page, methods=["GET", "POST"]), Route("/api/encode", encode, methods=["POST"])]
