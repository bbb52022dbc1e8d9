"""Pins that travel: `tokreg sync` (every pinned content into the local cache, from the
vendored folder, registries, exported files or a `tokreg serve`) and `tokreg copy` (versions
from one registry into another, with their history). Each calls one library function
(versions/pinned.py, versions/copy.py) and prints a line per version, or --json."""

from __future__ import annotations

from typing import Optional

import click

from ..registry import Registry
from ..versions import lockfile, pinned
from .app import REGISTRY
from .common import db_option, echo_json, json_option


@click.command()
@click.option(
    "--from",
    "sources",
    multiple=True,
    metavar="SOURCE",
    help="Also look here, after the others: a registry (path or URL), a `tokreg export --format tokreg` "
    "file or a folder of them, or a `tokreg serve` URL. Repeatable.",
)
@click.option("--vendor", is_flag=True, help="Also store each pinned content in the vendored folder (tokreg.vendor/).")
@click.option(
    "--lock", "lock_path", type=click.Path(dir_okay=False), help="The lockfile [default: the nearest tokreg.lock]."
)
@json_option
@db_option
def sync(sources: tuple[str, ...], vendor: bool, lock_path: Optional[str], as_json: bool, db: Optional[str]) -> None:
    """Bring every version pinned in tokreg.lock into the local cache, so that tokreg.load works
    offline (TOKREG_OFFLINE=1).

    Each pin is looked for, by its hash, in: the vendored folder beside the lockfile, the local
    cache, --db / TOKREG_DB, the registry recorded in the pin, then each --from SOURCE; what is
    found must hash to the pin, or the next source is tried. A --from that cannot be read at all
    (missing, not an export, unreachable) is refused before any pin is synced.

    \b
    Example:
        tokreg sync --from http://tokreg.example.internal:8750
    """
    lock = lockfile.current(lock_path) if lock_path else lockfile.current()
    if lock is None:
        raise click.UsageError("no tokreg.lock here or above; pin a version with `tokreg pin REF` first")
    done = pinned.sync(lock, db=db, extra=sources, vendor_too=vendor)
    if as_json:
        echo_json([s.to_json() for s in done])
        return
    for s in done:
        click.echo(f"{s.ref}  {s.hash}  {s.source}")


@click.command(name="copy")
@click.argument("src")
@click.argument("dst")
@click.argument("refs", nargs=-1)
@click.option("--aliases", is_flag=True, help="Also point the source's aliases of the copied versions at them.")
@click.option(
    "--no-parents", is_flag=True, help="Copy only the versions named; a parent left behind is recorded as not copied."
)
@json_option
def copy(src: str, dst: str, refs: tuple[str, ...], aliases: bool, no_parents: bool, as_json: bool) -> None:
    """Copy versions (REFs, or every version) from the registry SRC into the registry DST.

    Each version keeps its hash and comes with its content, tokens, merges, training run, samples,
    lineage (its ancestors are copied first), evaluations and audit; one transaction each. A
    version DST already holds under its name is skipped, so copying again changes nothing; a
    taken NAME@N gets the next number, and its origin is recorded. SRC and DST are SQLite paths
    or SQLAlchemy URLs (PostgreSQL), in either direction.

    \b
    Example:
        tokreg copy ~/.local/share/tokreg/registry.db postgresql://me@db/tokreg gpt-mini@2 --aliases
    """
    source = Registry(src, lock=False)
    target = Registry(dst, lock=False)
    ctx = click.get_current_context()
    ctx.meta[REGISTRY] = target
    ctx.call_on_close(source.close)
    done = source.copy_to(target, refs, parents=not no_parents, aliases=aliases)
    if as_json:
        echo_json([c.to_json() for c in done])
        return
    for c in done:
        what = "copied" if c.written else "already there"
        as_ = f" as {c.ref} (NAME@N taken)" if c.written and c.renumbered else ("" if c.written else f" as {c.ref}")
        parent = f"; parent {c.parent_not_copied} not copied" if c.parent_not_copied else ""
        click.echo(f"{c.source_ref}  {c.content_hash}  {what}{as_}{parent}")
    click.echo(
        f"{sum(c.written for c in done)} copied, {sum(not c.written for c in done)} already there -> {target.where}"
    )
