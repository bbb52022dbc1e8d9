"""`tokreg cache list|verify|prune`: the local cache of compiled content, with sizes
(versions/cache_admin.py)."""

from __future__ import annotations

import time
from typing import Optional

import click

from ..encoding import content_cache
from ..errors import IntegrityError
from ..versions import cache_admin
from .common import echo_json, echo_table, json_option


@click.group()
def cache() -> None:
    """See, check and clean the local cache of compiled content ($XDG_CACHE_HOME/tokreg/compiled,
    or TOKREG_CACHE). Deleting it is always safe: `tokreg sync` fills it again.

    \b
    Example:
        tokreg cache prune --older-than 30d
    """


def _age(mtime: float) -> str:
    days = (time.time() - mtime) / 86400
    return f"{days:.1f} d"


@cache.command(name="list")
@json_option
def list_(as_json: bool) -> None:
    """List the cached contents and built encoders: hash, what, size, age.

    \b
    Example:
        tokreg cache list
    """
    found = cache_admin.entries()
    if as_json:
        echo_json({"folder": str(content_cache.cache_dir()), "files": [e.to_json() for e in found]})
        return
    echo_table(
        ["hash", "what", "bytes", "age"],
        [(e.hash or e.path.name, e.what, f"{e.size:,}", _age(e.mtime)) for e in found],
    )
    click.echo(f"{len(found)} file(s), {sum(e.size for e in found):,} bytes in {content_cache.cache_dir()}")


@cache.command()
@json_option
def verify(as_json: bool) -> None:
    """Re-hash every cached content; a file that does not hash right is removed (exit 3).

    \b
    Example:
        tokreg cache verify
    """
    found = cache_admin.verify()
    bad = [e for e in found if e.state not in (content_cache.INTACT, "other")]
    if as_json:
        echo_json([e.to_json() for e in found])
    else:
        for e in found:
            click.echo(f"{e.state:<10} {e.hash or e.path.name}  {e.size:,} bytes")
    if bad:
        raise IntegrityError(f"{len(bad)} of {len(found)} cached file(s) did not hash right (removed where possible)")


@cache.command()
@click.option("--older-than", metavar="AGE", help="Only files cached longer ago than AGE (30d, 12h, 45m, 90s).")
@json_option
def prune(older_than: Optional[str], as_json: bool) -> None:
    """Delete cached contents (all, or those older than --older-than) and leftover temporary files.

    \b
    Example:
        tokreg cache prune --older-than 30d
    """
    gone = cache_admin.prune(cache_admin.duration(older_than) if older_than is not None else None)
    if as_json:
        echo_json([e.to_json() for e in gone])
        return
    click.echo(f"removed {len(gone)} file(s), {sum(e.size for e in gone):,} bytes from {content_cache.cache_dir()}")
