"""The web app of `tokreg serve`: the pages (pages/, one module each), static files, and what
wraps every request: the Host check, size limits and security headers, error pages.

The registry is opened read-only (`Registry.read_only`): nothing a request does can write to it.
Pages are drawn on the server from templates; the only scripts are static/*.js, and the
Content-Security-Policy allows no other (no inline script), so text from the registry, escaped
by the templates, could not run even if it were not.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..registry import Registry
from .cache import Lru
from .encoding import Encoders
from .http import HANDLERS
from .pages import diff, pin, playground, registry, sql, tokens, version
from .render import HERE
from .summaries import Summaries

HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; "
        b"base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]


class SecurityHeaders:
    """Adds HEADERS to every response."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def add(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + HEADERS
            await send(message)

        await self.app(scope, receive, add)


def loopback_hosts(host: str, port: int) -> list[str]:
    """The Host headers to accept: the loopback names (and `host` itself), so that a web page
    elsewhere cannot reach this server through a DNS name rebound to 127.0.0.1."""
    if host in ("0.0.0.0", "::", ""):
        return ["*"]
    return sorted({"127.0.0.1", "localhost", "::1", "[::1]", host})


def create_app(reg: Registry, *, allowed_hosts: Sequence[str] = ("*",)) -> Starlette:
    """The app over `reg` (open it with `Registry.read_only`)."""
    app = Starlette(
        routes=[
            *registry.routes,
            *version.routes,
            *tokens.routes,
            *pin.routes,
            *playground.routes,
            *diff.routes,
            *sql.routes,
            Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
        ],
        middleware=[
            Middleware(SecurityHeaders),
            Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts)),
        ],
        exception_handlers=HANDLERS,
    )
    app.state.reg = reg
    app.state.location = reg.location
    app.state.encoders = Encoders(reg)
    app.state.summaries = Summaries(reg)
    app.state.diffs = Lru(16)
    return app
