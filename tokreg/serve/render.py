"""The templates (templates/*.html): one Jinja environment with autoescaping on for every
template, so token text, SQL results and messages are always escaped, and the few filters the
pages share (numbers, times, visible token text)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Optional
from urllib.parse import quote, urlencode

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from starlette.requests import HTTPConnection

from ..package_version import __version__
from . import show

HERE = Path(__file__).resolve().parent


def _num(v: Any, digits: int = 4) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if not math.isfinite(v):
            return str(v)
        return f"{v:,.{digits}g}" if abs(v) < 1e15 else f"{v:.3e}"
    return str(v)


def _when(v: Any) -> str:
    if isinstance(v, str):
        try:
            v = datetime.fromisoformat(v)
        except ValueError:
            return str(v)
    return str(v.strftime("%Y-%m-%d %H:%M")) if isinstance(v, datetime) else ""


def _seconds(v: Optional[float]) -> str:
    return "" if v is None else f"{v:.2f} s"


def _size(n: Optional[int]) -> str:
    if n is None:
        return ""
    for unit, k in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= k:
            return f"{n / k:.1f} {unit}"
    return f"{n} B"


def _value(v: Any) -> str:
    """A config value as its JSON (true, null, {"name": ...}), the way it is stored."""
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _pair(merge: str) -> Optional[tuple[str, str]]:
    """A merge as `tokreg diff` writes it, "left + right", back into its two tokens; None when
    the text is ambiguous (a token that itself holds " + ")."""
    parts = merge.split(" + ")
    return (parts[0], parts[1]) if len(parts) == 2 else None


def _segments(v: Any) -> list[tuple[str, str]]:
    if isinstance(v, str):
        v = v.encode("utf-8", errors="surrogatepass")
    return show.segments(bytes(v)) if v else [("c", "∅")]


env = Environment(
    loader=FileSystemLoader(str(HERE / "templates")),
    autoescape=select_autoescape(default=True, default_for_string=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
env.filters.update(
    num=_num,
    when=_when,
    seconds=_seconds,
    size=_size,
    segments=_segments,
    plain=show.plain,
    value=_value,
    pair=_pair,
    ref=lambda s: quote(str(s), safe="@:"),  # a ref as a path segment, readable
)
env.globals.update(tokreg_version=__version__)


def url_with(request: HTTPConnection, **changes: Any) -> str:
    """This page's URL with some query parameters changed (None removes one)."""
    params = [(k, v) for k, v in request.query_params.multi_items() if k not in changes]
    for k, v in changes.items():
        if v is None:
            continue
        params += [(k, x) for x in v] if isinstance(v, (list, tuple)) else [(k, v)]
    q = urlencode(params)
    return request.url.path + ("?" + q if q else "")


def render(
    request: HTTPConnection,
    template: str,
    data: Mapping[str, Any],
    *,
    twin: Optional[str] = None,
    anonymous: bool = False,
) -> str:
    """`template` drawn from `data`, plus what every page's frame needs; `twin` is the link to
    the page's JSON when it is not this URL with ?format=json (a POSTed form). `anonymous` leaves
    out the registry's location, for requests refused before they may read anything."""
    state = request.app.state
    return env.get_template(template).render(
        **data,
        data=data,
        request=request,
        location="" if anonymous else state.location,
        url_with=lambda **kw: url_with(request, **kw),
        json_url=twin or url_with(request, format="json"),
        form_token=state.rules.form_token,  # every form that POSTs carries it (access.py)
    )
