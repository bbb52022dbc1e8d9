"""Managing versions: `tokreg tag`, `rm`, `pin`, `verify`, `reproduce`. Each opens the registry,
calls one `Registry` method and prints a line, a table or --json."""

from __future__ import annotations

from typing import Optional

import click

from ..data import AliasMove
from ..errors import IntegrityError
from .common import db_option, echo_json, json_option, open_registry


@click.command()
@click.argument("ref")
@click.argument("alias")
@click.option("--delete", is_flag=True, help="Delete the alias ALIAS of REF's name instead.")
@json_option
@db_option
def tag(ref: str, alias: str, delete: bool, as_json: bool, db: Optional[str]) -> None:
    """Point the alias ALIAS (prod, staging, …) of a tokenizer at the version REF names.

    The alias is then a ref, NAME@ALIAS; every move is kept (see `tokreg log`).

    \b
    Example:
        tokreg tag gpt-mini@2 prod
    """
    reg = open_registry(db)
    if delete:
        old = reg.untag(ref, alias)
        name = ref.partition("@")[0]
        out = AliasMove(ref=None, alias=f"{name}@{alias}", old=old, new=None, moved=True)
        msg = f"{name}@{alias} deleted (was {name}@{old})"
    else:
        out = reg.tag(ref, alias)
        if not out.moved:
            msg = f"{out.alias} already points at {out.ref}"
        elif out.old is None:
            msg = f"{out.alias} -> {out.ref}"
        else:
            msg = f"{out.alias} moved from @{out.old} to {out.ref}"
    if as_json:
        echo_json(out.to_json())
    else:
        click.echo(msg)


@click.command()
@click.argument("ref")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@db_option
def rm(ref: str, yes: bool, db: Optional[str]) -> None:
    """Remove a version, with its tokens, merges, run and samples; asks first.

    Refused while an alias points at the version: move or delete the alias first.

    \b
    Example:
        tokreg rm gpt-mini@1 --yes
    """
    reg = open_registry(db)
    v = reg.resolve(ref)  # resolved once, pins applied as everywhere, then handed to remove
    if v.number in reg.aliases(v.name).values():
        reg.remove(v)  # refuses, naming the aliases
    if not yes:
        click.confirm(f"remove {v.ref} ({v.content_hash}, {v.vocab_size:,} tokens)? This cannot be undone", abort=True)
    reg.remove(v)
    click.echo(f"removed {v.ref}")


# -- pin, verify ---------------------------------------------------------------------------------


@click.command()
@click.argument("ref")
@click.option("--dir", "folder", type=click.Path(file_okay=False), help="Write the lockfile here [default: .].")
@click.option(
    "--vendor", is_flag=True, help="Also store the content beside the lockfile, in tokreg.vendor/ (commit it)."
)
@json_option
@db_option
def pin(ref: str, folder: Optional[str], vendor: bool, as_json: bool, db: Optional[str]) -> None:
    """Pin the version REF names in ./tokreg.lock (a bare name pins the latest).

    In that project, tokreg.load("NAME") then loads exactly this content, by its hash, from the
    vendored folder, the local cache or a registry that holds it (see `tokreg sync`). With
    --vendor the content is also stored, compressed, in tokreg.vendor/ beside the lockfile, so a
    clone of the project loads it with no registry and no network.

    \b
    Example:
        tokreg pin gpt-mini@prod --vendor
    """
    p = open_registry(db).pin(ref, folder, vendor=vendor)
    if as_json:
        echo_json({"ref": p.ref, "hash": p.hash, "sha256": p.sha256, "registry": p.registry, "vendored": vendor})
    else:
        also = f" (content in {folder or '.'}/tokreg.vendor/)" if vendor else ""
        click.echo(f"pinned {p.ref}  {p.hash}  in {folder or '.'}/tokreg.lock{also}")


@click.command()
@click.argument("ref", required=False)
@json_option
@db_option
def verify(ref: Optional[str], as_json: bool, db: Optional[str]) -> None:
    """Recompute the hash of every stored version (or REF) from its rows and re-encode its
    sample strings; exits non-zero on any mismatch.

    \b
    Example:
        tokreg verify gpt-mini@2
    """
    reg = open_registry(db)
    results = reg.verify(ref)
    bad = [r for r in results if not r.ok]
    if as_json:
        echo_json([r.to_json() for r in results])
    else:
        for r in results:
            mark = click.style("ok    ", fg="green") if r.ok else click.style("FAILED", fg="red", bold=True)
            click.echo(f"{mark} {r.ref}  {r.hash}  {r.samples} sample(s) re-encoded")
            for p in r.problems:
                click.echo(f"       {p}")
            for note in r.notes:
                click.echo(f"       note: {note}")
    if bad:
        raise IntegrityError(
            f"{len(bad)} of {len(results)} version(s) failed verification: " + ", ".join(r.ref for r in bad)
        )


# -- reproduce -----------------------------------------------------------------------------------


@click.command()
@click.argument("ref")
@click.argument("files", nargs=-1, type=click.Path())
@json_option
@db_option
def reproduce(ref: str, files: tuple[str, ...], as_json: bool, db: Optional[str]) -> None:
    """Retrain REF from its recorded run (same config, the same corpus files, checked against
    the recorded fingerprint) and say whether the new hash equals the stored one; exits
    non-zero when it does not. FILES replace the recorded paths, in order, if the files moved.

    \b
    Example:
        tokreg reproduce gpt-mini@2
    """
    reg = open_registry(db)
    r = reg.reproduce(ref, list(files) or None)
    if as_json:
        echo_json(r.to_json())
    else:
        click.echo(f"{r.ref}: retrained from {len(r.files)} file(s) in {r.seconds:.2f} s")
        click.echo(f"  stored      {r.stored}")
        click.echo(f"  reproduced  {r.reproduced}")
        click.echo(
            click.style("  same hash: reproduced exactly", fg="green")
            if r.same
            else click.style("  DIFFERENT hash: training did not reproduce this version", fg="red", bold=True)
        )
    if not r.same:
        raise IntegrityError(f"{r.ref} did not reproduce: {r.reproduced} != stored {r.stored}")
