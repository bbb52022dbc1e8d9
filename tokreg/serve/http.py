"""What every page shares on the HTTP side: HTML or its JSON twin from the same data, request
bodies read under a cap, parameters checked, and errors turned into one clear 4xx (never a
traceback): a page for people, `{"error": ..., "status": ...}` for scripts.

A page's handler builds one plain dict and hands it to `respond`; the template renders that
dict and `?format=json` returns it, so scripts get exactly what people see.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Awaitable, Mapping
from datetime import date, datetime
from typing import Any, Callable, Optional, TypeVar
from urllib.parse import parse_qs

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from ..errors import InputError, IntegrityError, NotFoundError, ReadOnlyError, TokregError
from . import limits
from .access import require_form_token
from .render import render

log = logging.getLogger("tokreg.serve")
T = TypeVar("T")

#: Library errors -> HTTP status. Anything else a handler raises is a 500 with one line.
STATUS: tuple[tuple[type[TokregError], int], ...] = (
    (NotFoundError, 404),
    (ReadOnlyError, 403),
    (IntegrityError, 409),
    (TokregError, 400),
)


def _plain(v: Any) -> Any:
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "0x" + bytes(v).hex()
    if isinstance(v, (datetime, date)):
        return v.isoformat()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return str(v)


def to_json(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, default=_plain, allow_nan=False, separators=(",", ":")).encode("utf-8")


def to_json_in_parts(data: Any, part: int = 10_000) -> bytes:
    """`to_json(data)`, made a dict entry and at most `part` list items at a time. One json.dumps
    of megabytes holds the GIL throughout (the C encoder never yields it); in parts, a worker
    thread making a large answer lets the event loop serve pages in between."""
    if isinstance(data, dict):
        return b"{" + b",".join(to_json(str(k)) + b":" + to_json_in_parts(v, part) for k, v in data.items()) + b"}"
    if isinstance(data, list) and len(data) > part:
        return b"[" + b",".join(to_json(data[i : i + part])[1:-1] for i in range(0, len(data), part)) + b"]"
    return to_json(data)


def wants_json(request: HTTPConnection) -> bool:
    if request.query_params.get("format") == "json" or request.url.path.startswith("/api/"):
        return True
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


class Json(JSONResponse):
    def render(self, content: Any) -> bytes:
        return to_json(content)


def respond(
    request: Request, template: str, data: Mapping[str, Any], *, status: int = 200, twin: Optional[str] = None
) -> Response:
    """The page `template` drawn from `data`, or `data` itself as JSON (`?format=json`); `twin`
    links the JSON of a POSTed page."""
    if wants_json(request):
        return Json(dict(data), status_code=status)
    return HTMLResponse(render(request, template, data, twin=twin), status_code=status)


async def blocking(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Runs database reads and encoding on a worker thread, off the event loop."""
    return await run_in_threadpool(fn, *args, **kwargs)


async def body(request: Request) -> bytes:
    """The request body, refused past MAX_BODY_BYTES before (or while) it is read."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limits.MAX_BODY_BYTES:
        raise HTTPException(413, f"the request body is {int(declared):,} bytes; the limit is {limits.MAX_BODY_BYTES:,}")
    got = bytearray()
    async for chunk in request.stream():
        got += chunk
        if len(got) > limits.MAX_BODY_BYTES:
            raise HTTPException(413, f"the request body is over the limit of {limits.MAX_BODY_BYTES:,} bytes")
    return bytes(got)


async def form(request: Request) -> dict[str, list[str]]:
    """Query parameters, plus the fields of a POSTed form (urlencoded) or JSON object."""
    out: dict[str, list[str]] = {k: request.query_params.getlist(k) for k in request.query_params}
    if request.method != "POST":
        return out
    raw = await body(request)
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    try:
        if kind == "application/json":
            doc = json.loads(raw.decode("utf-8"))
            if not isinstance(doc, dict):
                raise InputError('the JSON body must be an object, e.g. {"text": "...", "versions": ["a@1"]}')
            for k, v in doc.items():
                out[k] = [
                    str(x) if not isinstance(x, bool) else str(x).lower() for x in (v if isinstance(v, list) else [v])
                ]
        else:
            fields = parse_qs(raw.decode("utf-8"), keep_blank_values=True, max_num_fields=100)
            # Any body but JSON is one a page on another site can send: only this server's pages
            # (which carry its form token) may post it.
            require_form_token(request, fields)
            out.update(fields)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(
            f"the request body is not valid {'JSON' if kind == 'application/json' else 'form data'}: {e}"
        ) from None
    except RecursionError:  # json.loads on arrays or objects nested thousands deep
        raise InputError("the JSON body is nested too deeply; send one object of strings and lists") from None
    except ValueError as e:  # parse_qs: too many fields
        raise InputError(f"the form is not valid: {e}") from None
    return out


def one(params: Mapping[str, list[str]], key: str, default: str = "") -> str:
    values = params.get(key) or [default]
    return values[-1]


def number(params: Mapping[str, list[str]], key: str, default: int, lo: int, hi: int) -> int:
    raw = one(params, key, str(default)).strip() or str(default)
    if not raw.lstrip("-").isdigit() or not lo <= int(raw) <= hi:
        raise InputError(f"parameter {key}={raw[:40]!r} must be a whole number from {lo} to {hi}")
    return int(raw)


def choice(params: Mapping[str, list[str]], key: str, allowed: tuple[str, ...]) -> str:
    raw = one(params, key, allowed[0]) or allowed[0]
    if raw not in allowed:
        raise InputError(f"parameter {key}={raw[:40]!r} must be one of {', '.join(allowed)}")
    return raw


def text_param(params: Mapping[str, list[str]], key: str) -> str:
    text = one(params, key)
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > limits.MAX_TEXT_BYTES:
        raise HTTPException(413, f"the text is {size:,} bytes; the limit is {limits.MAX_TEXT_BYTES:,} (UTF-8)")
    return text


def error_response(
    request: HTTPConnection,
    status: int,
    message: str,
    headers: Optional[Mapping[str, str]] = None,
    *,
    anonymous: bool = False,
) -> Response:
    """One error: `{"error": message, "status": status}` for scripts, the error page for people
    (`anonymous`: without the registry's location, for a request refused before it may read)."""
    data = {"error": message, "status": status}
    if wants_json(request):
        return Json(data, status_code=status, headers=headers)
    page = render(request, "error.html", data, anonymous=anonymous)
    return HTMLResponse(page, status_code=status, headers=headers)


def status_of(exc: TokregError) -> int:
    return next(code for cls, code in STATUS if isinstance(exc, cls))


async def on_tokreg_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, TokregError)
    return error_response(request, status_of(exc), str(exc))


async def on_http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = exc.detail if isinstance(exc.detail, str) and exc.detail else "error"
    if exc.status_code == 404 and message == "Not Found":
        message = f"no page at {request.url.path}; start from the registry at /"
    return error_response(request, exc.status_code, message, exc.headers)


async def on_crash(request: Request, exc: Exception) -> Response:
    log.exception("error serving %s", request.url.path)
    return error_response(request, 500, f"internal error ({type(exc).__name__}); the server's log has the details")


HANDLERS: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
    TokregError: on_tokreg_error,
    HTTPException: on_http_error,
    Exception: on_crash,
}
