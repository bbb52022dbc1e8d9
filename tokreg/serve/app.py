"""The web app of `tokreg serve`: the pages (pages/, one module each), static files, and what
wraps every request: who may ask (access.py: Host names, the --token, no work for other sites),
security headers, error pages. Heavy requests are admitted and bounded by work.py.

The registry is opened read-only (`Registry.read_only`): nothing a request does can write to it.
Pages are drawn on the server from templates; the only scripts are static/*.js, and the
Content-Security-Policy allows no other (no inline script), so text from the registry, escaped
by the templates, could not run even if it were not.
"""

from __future__ import annotations

from typing import Optional
from urllib.parse import parse_qsl, urlencode

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import HTTPConnection
from starlette.responses import RedirectResponse
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..registry import Registry
from ..store.privileges import role_warning
from . import access
from .access import Rules
from .cache import Lru
from .encoding import Encoders
from .http import HANDLERS, error_response
from .pages import content, diff, pin, playground, registry, sql, tokens, version
from .render import HERE
from .summaries import Summaries
from .work import Work

HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; "
        b"base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    # Not "no-referrer": with it the browser sends `Origin: null` for the pages' own form POSTs,
    # which the same-origin rule (access.py) must refuse. Other sites still get no referrer.
    (b"referrer-policy", b"same-origin"),
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


class Access:
    """Applies access.py's rules to every request before any page: the Host, the --token (and
    the `?token=` visit that sets its cookie), and no POST that a browser marks as cross-site."""

    def __init__(self, app: ASGIApp, rules: Rules):
        self.app = app
        self.rules = rules

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan; the app has no websockets
            await self.app(scope, receive, send)
            return
        conn = HTTPConnection(scope)
        rules, headers = self.rules, conn.headers
        why = access.host_refusal(rules, headers)
        if why:
            await error_response(conn, 400, why, anonymous=True)(scope, receive, send)
            return
        # The static files are the package's own CSS and scripts, public like the package: served
        # without the token, so that the page saying a token is needed is drawn as the others.
        if rules.token is not None and not scope["path"].startswith("/static/"):
            given = conn.query_params.get("token")
            if given is not None and scope["method"] == "GET" and access.is_token(rules, given):
                await self._keep_token(conn, rules.token)(scope, receive, send)
                return
            if not access.has_token(rules, headers, conn.url.port):
                res = error_response(
                    conn, 401, access.NO_TOKEN, {"www-authenticate": 'Bearer realm="tokreg"'}, anonymous=True
                )
                await res(scope, receive, send)
                return
        if scope["method"] not in access.SAFE_METHODS:
            why = access.cross_site(rules, headers)
            if why:
                await error_response(conn, 403, access.refusal(why))(scope, receive, send)
                return
        await self.app(scope, receive, send)

    @staticmethod
    def _keep_token(conn: HTTPConnection, token: str) -> RedirectResponse:
        """The answer to a `?token=` visit: the cookie, and the same page without the token
        (so it stays out of the address bar and the history)."""
        rest = urlencode([(k, v) for k, v in parse_qsl(conn.url.query, keep_blank_values=True) if k != "token"])
        res = RedirectResponse(conn.url.path + ("?" + rest if rest else ""), status_code=303)
        res.set_cookie(
            access.token_cookie(conn.url.port),
            token,
            httponly=True,
            samesite="lax",
            secure=conn.url.scheme == "https",
            path="/",
        )
        return res


def create_app(reg: Registry, *, rules: Optional[Rules] = None, work: Optional[Work] = None) -> Starlette:
    """The app over `reg` (open it with `Registry.read_only`); `rules` say who may ask
    (default: loopback names only, no token), `work` bounds heavy requests (default: limits.py)."""
    rules = rules or Rules.of("127.0.0.1")
    app = Starlette(
        routes=[
            *registry.routes,
            *version.routes,
            *tokens.routes,
            *pin.routes,
            *playground.routes,
            *diff.routes,
            *sql.routes,
            *content.routes,
            Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
        ],
        middleware=[Middleware(SecurityHeaders), Middleware(Access, rules=rules)],
        exception_handlers=HANDLERS,
    )
    app.state.reg = reg
    app.state.location = reg.location
    app.state.encoders = Encoders(reg)
    app.state.summaries = Summaries(reg)
    app.state.diffs = Lru(16)
    app.state.rules = rules
    app.state.work = work or Work()
    # Said once (at startup, and on the SQL page): what the PostgreSQL role could do beyond reading.
    app.state.role_warning = role_warning(reg.engine)
    return app
