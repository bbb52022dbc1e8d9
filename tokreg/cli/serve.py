"""`tokreg serve`: the registry in a browser, read-only, with a token playground."""

from __future__ import annotations

from typing import Optional

import click

from ..errors import InputError
from .common import db_option

#: What `pip install 'tokreg[serve]'` brings.
EXTRA = ("starlette", "uvicorn", "jinja2")


@click.command()
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="Address to listen on (loopback: this machine only)."
)
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="Port (0: any free one).")
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="Another name the server may be asked by (the Host header), e.g. its DNS name; repeatable. "
    "By default only the loopback names and the --host address.",
)
@click.option(
    "--token",
    envvar="TOKREG_SERVE_TOKEN",
    metavar="TOKEN",
    help="Require this token (16+ characters) on every request: Authorization: Bearer TOKEN, "
    "or a cookie set by opening any page once with ?token=TOKEN. Also TOKREG_SERVE_TOKEN.",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the registry page in a web browser.")
@db_option
def serve(
    host: str, port: int, allowed_hosts: tuple[str, ...], token: Optional[str], open_browser: bool, db: Optional[str]
) -> None:
    """Serve the registry as a read-only web app: versions, tokens and their merge ancestry, a
    token playground, diffs, SQL, pins; every page has a JSON twin (?format=json).

    Pages that run SQL or encode text refuse requests from other sites; heavy requests are
    bounded (a busy server answers 503 with Retry-After). Needs the serve extra:
    pip install 'tokreg[serve]'. See docs/serve.md.

    \b
    Examples:
        tokreg serve --open
        export TOKREG_SERVE_TOKEN=$(python -c 'import secrets; print(secrets.token_urlsafe(24))')
        tokreg serve --host 0.0.0.0 --allowed-host tokreg.team.example
    """
    try:
        # The web stack is an optional extra, imported only by this command.
        from ..serve import serve as run
    except ImportError as e:
        if (e.name or "").split(".")[0] not in EXTRA:
            raise
        raise InputError(
            f"tokreg serve needs the serve extra ({e.name} is missing): pip install 'tokreg[serve]'"
        ) from None
    run(
        db,
        host=host,
        port=port,
        open_browser=open_browser,
        allowed_hosts=allowed_hosts,
        token=token,
        say=click.echo,
        warn=lambda line: click.echo(line, err=True),
    )
