"""What programs fetch from `tokreg serve`: a version's canonical content by its hash
(`/content/HASH`), and a small JSON index of what is served (`/index.json`), so that
`tokreg sync --from http://…` and `tokreg.load(..., db="http://…")` (versions/remote.py) work
against a team's server. Both are GET only and pass through every rule of access.py (Host
names, the --token) like the pages do.

Content is immutable (the hash names it exactly), so its answer carries a strong ETag (the
hash itself), `Cache-Control: max-age=31536000, immutable` (`public` unless the server has a
token) and answers `If-None-Match` with 304. The client checks what arrives against the hash.

    GET /index.json
    {"format": "tokreg-index", "format_version": 1,
     "names": {"gpt-mini": {"versions": {"1": {"hash": "xxh3-128:…", "sha256": "sha256:…"}},
                            "aliases": {"prod": 1}}}}
"""

from __future__ import annotations

from typing import Any, Optional

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...encoding import content_cache
from ...errors import InputError, NotFoundError
from ...registry import Registry
from ..http import Json, blocking

INDEX_FORMAT = "tokreg-index"
IMMUTABLE = "max-age=31536000, immutable"


def index(reg: Registry) -> dict[str, Any]:
    names: dict[str, Any] = {}
    for v in reg.versions():
        entry = names.setdefault(v.name, {"versions": {}, "aliases": {}})
        entry["versions"][str(v.number)] = {"hash": v.content_hash, "sha256": v.sha256}
    for name, entry in names.items():
        entry["aliases"] = dict(sorted(reg.aliases(name).items()))
    return {"format": INDEX_FORMAT, "format_version": 1, "names": names}


def _content(reg: Registry, hash_label: str) -> Optional[bytes]:
    if content_cache.path_of(hash_label) is None:  # the one check of a hash label's shape
        raise InputError(f"{hash_label[:80]!r} is not a content hash (xxh3-128:<32 lowercase hex digits>)")
    return reg.content(hash_label)


async def index_page(request: Request) -> Response:
    return Json(await blocking(index, request.app.state.reg), headers={"cache-control": "no-cache"})


async def content_page(request: Request) -> Response:
    hash_label = request.path_params["hash"]
    etag = f'"{hash_label}"'
    cache = ("private, " if request.app.state.rules.token is not None else "public, ") + IMMUTABLE
    raw = await blocking(_content, request.app.state.reg, hash_label)
    if raw is None:
        raise NotFoundError(f"this registry holds no version with content {hash_label}")
    headers = {"etag": etag, "cache-control": cache}
    if etag in [t.strip() for t in request.headers.get("if-none-match", "").split(",")]:
        return Response(status_code=304, headers=headers)
    return Response(raw, media_type="application/octet-stream", headers=headers)


routes = [Route("/index.json", index_page), Route("/content/{hash}", content_page)]
