"""Who may ask `tokreg serve` for what. Three rules, checked on every request before a page runs:

1. **Host.** The Host header must be one of the server's names: the loopback names and the
   address it is bound to, plus every `--allowed-host NAME`. A page elsewhere cannot reach the
   server through a DNS name rebound to its address, whatever `--host` is.
2. **Token** (only with `--token`). Every request but for the static files (the package's own
   CSS and scripts) carries it, as `Authorization: Bearer TOKEN` or as the cookie that one visit
   to any page with `?token=TOKEN` sets (the visit is then redirected to the same page without
   it). Compared in constant time.
3. **Same origin for work.** A request that makes the server compute on what it sends (every
   POST, and the GETs that encode text, which call `require_same_origin`) is refused when a
   browser says it comes from another site: `Sec-Fetch-Site` other than `same-origin` or `none`,
   or an `Origin` that is not this server. A POSTed form (the kind of body a page on another
   site can send without asking the server first) must also carry this server's form token,
   which only its own pages hold: the guard for browsers too old to send `Sec-Fetch-Site`.

Scripts are not browsers: a request with no `Origin` and no `Sec-Fetch-Site` reads every page,
and a JSON POST (`content-type: application/json`, which a page on another site cannot send
without a CORS preflight this server never grants) runs SQL or encodes without the form token.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from typing import Optional
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection

from ..errors import InputError

#: The names a browser on this machine uses for a server on loopback.
LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: The cookie that holds the --token after a `?token=` visit (`token_cookie` adds the port).
TOKEN_COOKIE = "tokreg_token"
#: The form field that carries the form token (pages put it in every form that POSTs).
FORM_FIELD = "form_token"
#: A --token shorter than this is refused: it could be guessed.
MIN_TOKEN_CHARS = 16
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def host_name(host: str) -> str:
    """`host` (a Host header or an address) without its port and brackets, lowercased:
    `[::1]:8765` -> `::1`, `Example.org:80` -> `example.org`."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host[1:]
    if host.count(":") == 1:
        return host.split(":")[0]
    return host


@dataclass(frozen=True)
class Rules:
    """What the access middleware (app.py) checks. `hosts`: every Host name accepted; `named`: the ones given with
    --allowed-host (also accepted as an Origin's name behind a proxy that rewrites Host);
    `token`: the --token, if any; `form_token`: this server's random form token."""

    hosts: frozenset[str]
    named: frozenset[str] = frozenset()
    token: Optional[str] = None
    form_token: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    @classmethod
    def of(cls, host: str, allowed_hosts: Iterable[str] = (), token: Optional[str] = None) -> Rules:
        """The rules for a server bound to `host`: loopback names and `host` itself, plus
        `allowed_hosts`; `token` (at least MIN_TOKEN_CHARS) required on every request if given."""
        named = frozenset(host_name(h) for h in allowed_hosts if h.strip())
        if token is not None and len(token) < MIN_TOKEN_CHARS:
            raise InputError(
                f"the --token is {len(token)} characters; give at least {MIN_TOKEN_CHARS}, e.g. from "
                "python -c 'import secrets; print(secrets.token_urlsafe(24))'"
            )
        return cls(hosts=frozenset({*LOOPBACK, host_name(host), *named}), named=named, token=token or None)

    def who(self, host: str, port: int) -> str:
        """One line saying who can reach a server bound to host:port under these rules."""
        names = ", ".join(sorted(self.hosts))
        where = (
            "this machine only"
            if host_name(host) in LOOPBACK
            else f"any machine that can connect to {host} port {port}, by the names {names} (more with --allowed-host)"
        )
        if self.token:
            return f"reachable from {where}; every request needs the --token"
        if host_name(host) in LOOPBACK:
            return f"reachable from {where}"
        return f"reachable from {where}; any of them can run SQL and encode text: add --token to require a token"


def _is(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass"))


def _own_origin(rules: Rules, headers: Headers) -> Optional[str]:
    """Why the request's Origin is not this server, or None when it is (or there is none)."""
    origin = headers.get("origin")
    if origin is None:
        return None
    host = headers.get("host", "").lower()
    parts = urlsplit(origin)
    if parts.scheme in ("http", "https") and (parts.netloc.lower() == host or host_name(parts.netloc) in rules.named):
        return None
    return f"its Origin {origin[:100]} is not this server ({host[:100]})"


def cross_site(rules: Rules, headers: Headers) -> Optional[str]:
    """Why a browser marks this request as coming from another site, or None."""
    site = headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return f"the browser marks it as coming from another site (Sec-Fetch-Site: {site[:40]})"
    return _own_origin(rules, headers)


def refusal(why: str) -> str:
    return f"refused: {why}; tokreg serve runs queries and encodes text only for its own pages and for scripts"


def require_same_origin(conn: HTTPConnection) -> None:
    """Raises a 403 when a browser says the request comes from another site (see rule 3)."""
    why = cross_site(conn.app.state.rules, conn.headers)
    if why:
        raise HTTPException(403, refusal(why))


def require_form_token(conn: HTTPConnection, fields: dict[str, list[str]]) -> None:
    """Raises a 403 unless a POSTed form carries this server's form token (and removes it from
    the fields, which are the page's parameters)."""
    given = fields.pop(FORM_FIELD, [""])[-1]
    if not _is(given, conn.app.state.rules.form_token):
        raise HTTPException(
            403,
            "refused: a form POST needs this server's form token, which its own pages carry; "
            'scripts POST JSON instead (content-type: application/json, e.g. {"q": "SELECT 1"} to /sql)',
        )


def _bearer(headers: Headers) -> str:
    kind, _, value = headers.get("authorization", "").partition(" ")
    return value.strip() if kind.lower() == "bearer" else ""


def token_cookie(port: Optional[int]) -> str:
    """The name of the token cookie of the server on `port`. Browsers keep cookies per host,
    not per port, so two servers on one machine with one name would each overwrite the other's
    token and ask for it again: the port is part of the name."""
    return TOKEN_COOKIE if port is None else f"{TOKEN_COOKIE}_{port}"


def _cookie(headers: Headers, port: Optional[int]) -> str:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except CookieError:  # a malformed Cookie header is no token
        return ""
    morsel = jar.get(token_cookie(port))
    return morsel.value if morsel is not None else ""


def is_token(rules: Rules, given: str) -> bool:
    """Whether `given` is the --token (compared in constant time)."""
    return rules.token is not None and _is(given, rules.token)


def has_token(rules: Rules, headers: Headers, port: Optional[int]) -> bool:
    """Whether the request carries the --token (as a bearer token or the cookie of the server
    on `port`); True without one."""
    if rules.token is None:
        return True
    return is_token(rules, _bearer(headers)) or is_token(rules, _cookie(headers, port))


def host_refusal(rules: Rules, headers: Headers) -> Optional[str]:
    """Why the request's Host is not one of this server's names, or None."""
    host = headers.get("host", "")
    if host_name(host) in rules.hosts:
        return None
    shown = host[:100] or "(none)"
    return f"refused: Host {shown} is not a name of this server; start it with --allowed-host NAME to add one"


NO_TOKEN = (
    "this tokreg serve needs its token: open any page once with ?token=TOKEN, "
    "or send the header Authorization: Bearer TOKEN"
)
