"""The pin page (`/v/REF/pin`): the `tokreg.lock` entry that pins a version, ready to copy, and
the commands that write and use it."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...registry import Registry
from ...versions import lockfile
from ..http import blocking, respond


def snippet(reg: Registry, ref: str) -> dict[str, Any]:
    v = reg.resolve(ref)
    pin = lockfile.new_pin(v.name, v.number, v.content_hash, v.sha256, reg.location)
    return {
        "ref": v.ref,
        "name": v.name,
        "hash": v.content_hash,
        "lockfile": lockfile.render([pin]),
        "command": f"tokreg pin {v.ref} --db '{reg.location}'",
        "python": f'import tokreg\ntok = tokreg.load("{v.name}")  # in the project: exactly {v.ref}, its hash checked',
    }


async def page(request: Request) -> Response:
    data = await blocking(snippet, request.app.state.reg, request.path_params["ref"])
    return respond(request, "pin.html", data)


routes = [Route("/v/{ref}/pin", page)]
