"""The commands that treat versions as a registry: tag, log, rm, diff, pin, verify, export,
import, reproduce. Each opens the registry, calls one `Registry` method and prints a table
(or --json). Registered on `cli` when cli.py imports this module."""

from __future__ import annotations

from typing import Any, Optional

import click

from .cli import _registry, cli, db_option, echo_json, echo_table, json_option
from .errors import IntegrityError
from .versions import VersionInfo


def _when(dt: Any) -> str:
    return str(dt.strftime("%Y-%m-%d %H:%M:%S"))


@cli.command()
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
    reg = _registry(db)
    if delete:
        old = reg.untag(ref, alias)
        name = ref.partition("@")[0]
        out: dict[str, Any] = {"alias": f"{name}@{alias}", "old": old, "new": None, "moved": True}
        msg = f"{name}@{alias} deleted (was {name}@{old})"
    else:
        out = reg.tag(ref, alias)
        if not out["moved"]:
            msg = f"{out['alias']} already points at {out['ref']}"
        elif out["old"] is None:
            msg = f"{out['alias']} -> {out['ref']}"
        else:
            msg = f"{out['alias']} moved from @{out['old']} to {out['ref']}"
    if as_json:
        echo_json(out)
    else:
        click.echo(msg)


@cli.command()
@click.argument("name")
@json_option
@db_option
def log(name: str, as_json: bool, db: Optional[str]) -> None:
    """Show the history of NAME: versions created and alias moves, with times (UTC).

    \b
    Example:
        tokreg log gpt-mini
    """
    rows = _registry(db).log(name)
    if as_json:
        echo_json(rows)
        return
    echo_table(
        ["time", "event", "ref", "detail", "hash"],
        [[_when(r["at"]), r["event"], r["ref"], r["detail"], (r["hash"] or "")[:25]] for r in rows],
    )


@cli.command()
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
    reg = _registry(db)
    v: VersionInfo = reg.resolve(ref)
    if v.number in reg.aliases(v.name).values():
        reg.remove(v.ref)  # refuses, naming the aliases
    if not yes:
        click.confirm(
            f"remove {v.ref} ({v.content_hash}, {v.vocab_size:,} tokens)? This cannot be undone", abort=True
        )
    reg.remove(v.ref)
    click.echo(f"removed {v.ref}")


# -- diff ----------------------------------------------------------------------------------------


def _h(s: str) -> str:
    return click.style(s, bold=True)


def _print_diff(d: dict[str, Any]) -> None:
    a, b = d["a"], d["b"]
    click.echo(f"{_h('A')} {a['ref']}  {a['hash']}  ({a['algorithm']})")
    click.echo(f"{_h('B')} {b['ref']}  {b['hash']}  ({b['algorithm']})")
    if a["hash"] == b["hash"]:
        click.echo(click.style("same content", fg="green"))
    vs, t = d["vocab_size"], d["tokens"]
    click.echo(_h("\nvocabulary"))
    click.echo(f"  size        {vs['a']:,} -> {vs['b']:,} ({vs['delta']:+,})")
    click.echo(
        f"  common      {t['common']:,} (matched by bytes; {t['common_with_other_id']:,} with another id)"
    )
    click.echo(
        click.style(f"  added       {t['added']:,}", fg="green") + "  " + _examples(t["added_examples"])
    )
    click.echo(
        click.style(f"  removed     {t['removed']:,}", fg="red") + "  " + _examples(t["removed_examples"])
    )
    m = d.get("merges")
    if m:
        click.echo(_h("\nmerges"))
        click.echo(f"  count       {m['a']:,} -> {m['b']:,}")
        click.echo(f"  common prefix {m['common_prefix']:,} merges")
        f = m["first_divergence"]
        if f:
            click.echo(f"  first divergence at rank {f['rank']}: A {_opt(f['a'])}  B {_opt(f['b'])}")
        click.echo(f"  only in A {m['only_a']:,}, only in B {m['only_b']:,}, re-ranked {m['reranked']:,}")
        for r in m["largest_reranks"][:5]:
            click.echo(f"    {r['merge']!r}: rank {r['rank_a']} -> {r['rank_b']}")
    s = d.get("scores")
    if s:
        click.echo(_h("\nscores") + f" ({s['common']:,} common tokens; largest changes in log probability)")
        echo_table(
            ["token", "a", "b", "delta"],
            [
                [repr(r["token"]), f"{r['a']:.4f}", f"{r['b']:.4f}", f"{r['delta']:+.4f}"]
                for r in s["largest_changes"]
            ],
        )
    c = d["config"]
    sp = c["special_tokens"]
    if c["changed"] or sp["added"] or sp["removed"] or sp["id_changed"]:
        click.echo(_h("\nconfig"))
        for k, v in c["changed"].items():
            click.echo(f"  {k}: {v['a']!r} -> {v['b']!r}")
        if sp["added"]:
            click.echo(click.style(f"  special tokens added: {', '.join(sp['added'])}", fg="green"))
        if sp["removed"]:
            click.echo(click.style(f"  special tokens removed: {', '.join(sp['removed'])}", fg="red"))
        for k, v in sp["id_changed"].items():
            click.echo(f"  special token {k}: id {v['a']} -> {v['b']}")
    else:
        click.echo(_h("\nconfig") + " identical")
    text = d.get("text")
    if text:
        click.echo(_h("\neffect on text"))
        echo_table(
            ["file", "bytes", "tokens A", "tokens B", "tok/byte A", "tok/byte B"],
            [
                [
                    f["file"],
                    f"{f['bytes']:,}",
                    f"{f['tokens_a']:,}",
                    f"{f['tokens_b']:,}",
                    f"{f['tokens_per_byte_a']:.4f}",
                    f"{f['tokens_per_byte_b']:.4f}",
                ]
                for f in text["files"]
            ],
        )
        w = text["words"]
        click.echo(
            f"  words segmented differently: {w['changed_distinct']:,} of {w['distinct']:,} distinct "
            f"({w['changed_occurrences']:,} of {w['occurrences']:,} occurrences)"
        )
        if text["top_changed"]:
            echo_table(
                ["word", "count", "A", "B"],
                [[r["word"], r["count"], " ".join(r["a"]), " ".join(r["b"])] for r in text["top_changed"]],
            )


def _opt(x: Optional[str]) -> str:
    return "(none)" if x is None else repr(x)


def _examples(items: list[str]) -> str:
    return ", ".join(repr(x) for x in items[:8]) + (", …" if len(items) > 8 else "")


@cli.command()
@click.argument("a")
@click.argument("b")
@click.option(
    "--text",
    "texts",
    multiple=True,
    type=click.Path(),
    metavar="FILE",
    help="Also compare how both encode FILE (repeatable).",
)
@click.option(
    "--top", type=int, default=10, show_default=True, help="How many examples of each kind to show."
)
@json_option
@db_option
def diff(a: str, b: str, texts: tuple[str, ...], top: int, as_json: bool, db: Optional[str]) -> None:
    """Compare versions A and B: tokens (by bytes), merges, scores, config; with --text, the
    effect on real text.

    \b
    Example:
        tokreg diff gpt-mini@1 gpt-mini@2 --text sample.txt
    """
    d = _registry(db).diff(a, b, texts=list(texts), top=top)
    if as_json:
        echo_json(d)
    else:
        _print_diff(d)


# -- pin, verify ---------------------------------------------------------------------------------


@cli.command()
@click.argument("ref")
@click.option(
    "--dir", "folder", type=click.Path(file_okay=False), help="Write the lockfile here [default: .]."
)
@json_option
@db_option
def pin(ref: str, folder: Optional[str], as_json: bool, db: Optional[str]) -> None:
    """Pin the version REF names in ./tokreg.lock (a bare name pins the latest).

    In that project, tokreg.load("NAME") then loads exactly this version and refuses content
    whose hash is not the pinned one.

    \b
    Example:
        tokreg pin gpt-mini@prod
    """
    p = _registry(db).pin(ref, folder)
    if as_json:
        echo_json({"ref": p.ref, "hash": p.hash, "sha256": p.sha256, "registry": p.registry})
    else:
        click.echo(f"pinned {p.ref}  {p.hash}  in {folder or '.'}/tokreg.lock")


@cli.command()
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
    results = _registry(db).verify(ref)
    bad = [r for r in results if not r["ok"]]
    if as_json:
        echo_json(results)
    else:
        for r in results:
            mark = (
                click.style("ok    ", fg="green") if r["ok"] else click.style("FAILED", fg="red", bold=True)
            )
            click.echo(f"{mark} {r['ref']}  {r['hash']}  {r['samples']} sample(s) re-encoded")
            for p in r["problems"]:
                click.echo(f"       {p}")
    if bad:
        raise IntegrityError(
            f"{len(bad)} of {len(results)} version(s) failed verification: "
            + ", ".join(r["ref"] for r in bad)
        )


# -- export, import ------------------------------------------------------------------------------


@cli.command()
@click.argument("ref")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["tokreg", "hf", "tiktoken"]),
    default="tokreg",
    show_default=True,
    help="tokreg: one self-describing file for Tokenizer.from_file; hf: a Hugging Face tokenizer.json; "
    "tiktoken: a .tiktoken rank file (byte-level BPE).",
)
@click.option("--output", "-o", type=click.Path(dir_okay=False), required=True, help="File to write.")
@db_option
def export(ref: str, fmt: str, output: str, db: Optional[str]) -> None:
    """Write the version REF names to one file that needs no registry.

    \b
    Example:
        tokreg export gpt-mini@prod --format hf -o tokenizer.json
    """
    v = _registry(db).export(ref, fmt, output)
    click.echo(f"wrote {v.ref} ({v.content_hash}) to {output} [{fmt}]")


# -- reproduce -----------------------------------------------------------------------------------


@cli.command()
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
    r = _registry(db).reproduce(ref, list(files) or None)
    if as_json:
        echo_json(r)
    else:
        click.echo(f"{r['ref']}: retrained from {len(r['files'])} file(s) in {r['seconds']:.2f} s")
        click.echo(f"  stored      {r['stored']}")
        click.echo(f"  reproduced  {r['reproduced']}")
        click.echo(
            click.style("  same hash: reproduced exactly", fg="green")
            if r["same"]
            else click.style("  DIFFERENT hash: training did not reproduce this version", fg="red", bold=True)
        )
    if not r["same"]:
        raise IntegrityError(f"{r['ref']} did not reproduce: {r['reproduced']} != stored {r['stored']}")
