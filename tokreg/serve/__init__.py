"""`tokreg serve`: the registry in a browser, read-only, with a token playground.

Needs the `serve` extra (`pip install 'tokreg[serve]'`: Starlette, uvicorn, Jinja2).

    app.py        the Starlette app: routes, the access middleware, security headers, error handlers
    access.py     who may ask: Host names, the --token, no work for requests from other sites
    work.py       heavy requests (encoding, diff on text, SQL): refused cross-site, capped, timed
    server.py     binding the port, saying who can reach it, and running uvicorn
    pages/        one module per page: registry, version, tokens (table and one token),
                  playground (+ /api/encode), diff, sql, pin
    http.py       HTML or the JSON twin from one dict; capped bodies; errors as 4xx
    render.py     the Jinja environment (autoescaped) and its filters
    encoding.py   the playground's view of an encoding: ids, byte spans, disagreements
    summaries.py  `Registry.show` per version, kept (versions never change)
    cache.py      the small thread-safe LRU behind encoders, summaries and diffs
    show.py       token bytes drawn readably: whitespace visible, partial UTF-8 escaped
    charts.py     inline SVG chart geometry
    limits.py     what one request may ask for
    templates/, static/   the pages and their CSS and JavaScript (no build step)
"""

from .app import create_app
from .server import serve

__all__ = ["create_app", "serve"]
