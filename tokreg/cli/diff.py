"""`tokreg diff A B`: what `Registry.diff` reports, rendered for a terminal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

import click

from ..evaluation.metrics import METRICS, Metric
from ..versions.diff import VersionDiff
from .common import db_option, echo_json, echo_table, json_option, open_registry


def _h(s: str) -> str:
    return click.style(s, bold=True)


def _print_diff(d: VersionDiff) -> None:
    a, b = d.a, d.b
    click.echo(f"{_h('A')} {a.ref}  {a.hash}  ({a.title})")
    click.echo(f"{_h('B')} {b.ref}  {b.hash}  ({b.title})")
    if a.hash == b.hash:
        click.echo(click.style("same content", fg="green"))
    vs, t = d.vocab_size, d.tokens
    click.echo(_h("\nvocabulary"))
    click.echo(f"  size        {vs.a:,} -> {vs.b:,} ({vs.delta:+,})")
    click.echo(f"  common      {t.common:,} (matched by bytes; {t.common_with_other_id:,} with another id)")
    click.echo(click.style(f"  added       {t.added:,}", fg="green") + "  " + _examples(t.added_examples))
    click.echo(click.style(f"  removed     {t.removed:,}", fg="red") + "  " + _examples(t.removed_examples))
    ids = d.ids
    kept = click.style("yes", fg="green") if ids.a_preserved else click.style("no", fg="red")
    click.echo(f"  ids of {a.ref} preserved: {kept}" + ("" if ids.a_preserved else f" ({ids.first_difference})"))
    if ids.new_ids:
        shown = ", ".join(f"{e.id} {e.token!r}" for e in ids.new_examples)
        more = f", … ({ids.new_ids:,} in all)" if ids.new_ids > len(ids.new_examples) else ""
        click.echo(f"  ids new in B {ids.new_ids:,}: {shown}{more}")
    m = d.merges
    if m:
        click.echo(_h("\nmerges"))
        click.echo(f"  count       {m.a:,} -> {m.b:,}")
        click.echo(f"  common prefix {m.common_prefix:,} merges")
        f = m.first_divergence
        if f:
            click.echo(f"  first divergence at rank {f.rank}: A {_opt(f.a)}  B {_opt(f.b)}")
        click.echo(f"  only in A {m.only_a:,}, only in B {m.only_b:,}, re-ranked {m.reranked:,}")
        for r in m.largest_reranks[:5]:
            click.echo(f"    {r.merge!r}: rank {r.rank_a} -> {r.rank_b}")
    s = d.scores
    if s:
        click.echo(_h("\nscores") + f" ({s.common:,} common tokens; largest changes in log probability)")
        echo_table(
            ["token", "a", "b", "delta"],
            [[repr(r.token), f"{r.a:.4f}", f"{r.b:.4f}", f"{r.delta:+.4f}"] for r in s.largest_changes],
        )
    c = d.config
    sp = c.special_tokens
    if c.changed or sp.added or sp.removed or sp.id_changed:
        click.echo(_h("\nconfig"))
        for k, v in c.changed.items():
            click.echo(f"  {k}: {v.a!r} -> {v.b!r}")
        if sp.added:
            click.echo(click.style(f"  special tokens added: {', '.join(sp.added)}", fg="green"))
        if sp.removed:
            click.echo(click.style(f"  special tokens removed: {', '.join(sp.removed)}", fg="red"))
        for k, v in sp.id_changed.items():
            click.echo(f"  special token {k}: id {v.a} -> {v.b}")
    else:
        click.echo(_h("\nconfig") + " identical")
    text = d.text
    if text:
        for fe in text.files:
            click.echo(_h(f"\neffect on text: {fe.file}") + f" ({fe.bytes:,} bytes)")
            echo_table(
                ["metric", "A", "B", "B - A"],
                [
                    [
                        mt.label,
                        _metric(mt, fe.a[mt.name]),
                        _metric(mt, fe.b[mt.name]),
                        _metric(mt, fe.delta[mt.name], "+"),
                    ]
                    for mt in METRICS
                ],
            )
        w = text.words
        click.echo(_h("\nwords") + " (whitespace-separated, each encoded on its own)")
        click.echo(
            f"  words segmented differently: {w.changed_distinct:,} of {w.distinct:,} distinct "
            f"({w.changed_occurrences:,} of {w.occurrences:,} occurrences)"
        )
        if text.top_changed:
            echo_table(
                ["word", "count", "A", "B"],
                [[r.word, r.count, " ".join(r.a), " ".join(r.b)] for r in text.top_changed],
            )


def _metric(m: Metric, v: float, sign: str = "") -> str:
    if m.name == "tokens":
        return f"{int(v):{sign},}"
    return f"{100 * v:{sign}.2f}%" if m.percent else f"{v:{sign}.4f}"


def _opt(x: Optional[str]) -> str:
    return "(none)" if x is None else repr(x)


def _examples(items: Sequence[str]) -> str:
    return ", ".join(repr(x) for x in items[:8]) + (", …" if len(items) > 8 else "")


@click.command()
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
@click.option("--top", type=int, default=10, show_default=True, help="How many examples of each kind to show.")
@json_option
@db_option
def diff(a: str, b: str, texts: tuple[str, ...], top: int, as_json: bool, db: Optional[str]) -> None:
    """Compare versions A and B: tokens (by bytes), merges, scores, config; with --text, the
    metrics of `tokreg eval` for both on each file, with B - A, and the words they split
    differently.

    \b
    Example:
        tokreg diff gpt-mini@1 gpt-mini@2 --text sample.txt
    """
    reg = open_registry(db)
    d = reg.diff(a, b, texts=list(texts), top=top)
    if as_json:
        echo_json(d.to_json())
    else:
        _print_diff(d)
