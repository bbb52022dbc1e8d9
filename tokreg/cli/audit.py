"""`tokreg audit REF --residues --text FILE`: LiteToken's intermediate merge residues of a BPE
version (evaluation/residues.py), its options and its printout; the rest of `tokreg audit` is
in evaluate.py."""

from __future__ import annotations

from typing import Any, Callable, Optional

import click

from ..errors import InputError
from ..evaluation.residues import BELOW, MIN_SEEN, ResidueReport
from .common import echo_json, echo_table, open_registry


def residue_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--residues, --text FILE, --below R, --min-seen N."""
    f = click.option(
        "--min-seen",
        type=int,
        default=MIN_SEEN,
        show_default=True,
        metavar="N",
        help="--residues: judge only the tokens formed at least N times.",
    )(f)
    f = click.option(
        "--below",
        type=float,
        default=BELOW,
        show_default=True,
        metavar="R",
        help="--residues: a residue is emitted in fewer than R of the times it is formed.",
    )(f)
    f = click.option("--text", "text", type=click.Path(), help="--residues: the text to measure on (held-out text).")(f)
    return click.option(
        "--residues",
        is_flag=True,
        help="Intermediate merge residues (LiteToken, arXiv 2602.04706): tokens BPE forms on --text but "
        "almost always merges further, F1/(F1+F2) < R. Stored; see residue_tokens in `tokreg sql`.",
    )(f)


def residues(
    ref: str,
    text: Optional[str],
    below: float,
    min_seen: int,
    top: int,
    recompute: bool,
    as_json: bool,
    db: Optional[str],
) -> None:
    if text is None:
        raise InputError("--residues measures on a text: give it with --text FILE (held-out text)")
    report = open_registry(db).residues(ref, text, below=below, min_seen=min_seen, recompute=recompute)
    if as_json:
        echo_json(report.to_json())
    else:
        _print(report, top)


def _print(r: ResidueReport, top: int) -> None:
    share = len(r.residues) / r.vocab_size if r.vocab_size else 0.0
    click.echo(
        f"{r.ref} on {r.text} ({r.text_bytes:,} bytes): {len(r.residues):,} residues "
        f"({100 * share:.2f}% of {r.vocab_size:,} tokens) among {r.measured:,} tokens formed at least "
        f"{r.min_seen} times; residue: F1/(F1+F2) < {r.below} (F1 emitted, F2 merged further)"
    )
    shown = r.residues[:top]
    if shown:
        echo_table(
            ["id", "token", "final", "intermediate", "ratio"],
            [[t.id, t.to_json()["token"], f"{t.final:,}", f"{t.intermediate:,}", f"{t.ratio:.4f}"] for t in shown],
        )
    if r.stored:
        click.echo(f"read from the registry (measured {r.computed_at:%Y-%m-%d %H:%M} UTC); --recompute measures again")
