"""`tokreg eval` and `tokreg audit`: what `Registry.evaluate` and `Registry.audit` return,
rendered for a terminal (the best value per column marked), as --json, or as a chart."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Callable, Optional, Union

import click

from ..evaluation.audit import AuditedToken, AuditReport
from ..evaluation.charts import evaluation_png
from ..evaluation.evaluate import Evaluation
from ..evaluation.metrics import METRICS, Metric
from .audit import residue_options
from .audit import residues as residue_audit
from .common import db_option, echo_json, json_option, open_registry

#: A cell's mark: True for the best value of its column, "!" for a lossy version's, False for none.
Mark = Union[bool, str]


def _lossy(text: str) -> str:
    return click.style(text, fg="yellow", bold=True)


def _fmt(m: Metric, v: float) -> str:
    if m.name == "tokens":
        return f"{int(v):,}"
    if m.percent:
        return f"{100 * v:.2f}%" if v < 0.01 and v > 0 else f"{100 * v:.1f}%"
    return f"{v:.3f}"


def _width(s: str) -> int:
    """Columns `s` takes on a terminal: CJK and other wide characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def _table(headers: Sequence[str], rows: Sequence[Sequence[tuple[str, Mark]]], right: set[int]) -> None:
    """Prints rows of (cell, mark) cells: a best cell (True) gets a `*` and, on a terminal, bold
    green; a cell marked `!` (a lossy version ahead of the best lossless one) gets a `!` in yellow."""
    widths = [len(h) + (1 if i in right else 0) for i, h in enumerate(headers)]
    for r in rows:
        widths = [max(w, _width(c) + 1) for w, (c, _) in zip(widths, r)]

    def pad(i: int, s: str) -> str:
        gap = " " * max(widths[i] - _width(s), 0)
        return gap + s if i in right else s + gap

    # a right-aligned column keeps one place after each value for the `*`
    click.echo("  ".join(pad(i, h.upper() + (" " if i in right else "")) for i, h in enumerate(headers)).rstrip())
    for r in rows:
        cells = []
        for i, (c, mark) in enumerate(r):
            sign = "*" if mark is True else mark or " "
            text = pad(i, c + sign if i in right else c)
            cells.append(click.style(text, fg="green", bold=True) if mark is True else _lossy(text) if mark else text)
        click.echo("  ".join(cells).rstrip())


def _print_eval(ev: Evaluation) -> None:
    marks = ev.marks()
    headers = ["version", "text", "lang", "lossless"] + [m.label for m in METRICS]
    rows: list[list[tuple[str, Mark]]] = []
    order = {fp: n for n, fp in enumerate(dict.fromkeys(s.text.fingerprint for s in ev.scores))}
    for s in sorted(ev.scores, key=lambda s: order[s.text.fingerprint]):  # stable: versions in order
        fp = s.text.fingerprint
        row: list[tuple[str, Mark]] = [(s.ref, False), (s.text.name, False), (s.text.language or "", False)]
        row.append(("yes", False) if s.lossless else ("LOSSY", "!"))
        for m in METRICS:
            v = s.metrics[m.name]
            mark = marks.get((s.ref, fp, m.name))
            row.append((_fmt(m, v), "!" if mark == "lossy_ahead" else mark == "best"))
        rows.append(row)
    _table(headers, rows, right=set(range(4, len(headers))))
    if "best" in marks.values():
        click.echo("* the best value of each column among the versions on the same text")
    if any(not s.lossless for s in ev.scores):
        click.echo(
            "LOSSY: the version does not keep the text (unknown tokens, or lines that do not decode back byte for "
            "byte); the best of a compression column is taken among the versions that keep it"
        )
    if "lossy_ahead" in marks.values():
        click.echo("! fewer tokens than the best lossless version, bought by losing text")
    for p in ev.parity:
        if p is ev.parity[0]:
            langs = list(p.premiums)
            click.echo(click.style(f"\nparity: tokens relative to {p.reference} on the parallel texts", bold=True))
            prow: list[list[tuple[str, Mark]]] = []
            # a premium counted in tokens that lose text is no parity: lossy versions are marked
            # and the lowest spread is taken among the others, when there are any
            lossy = {s.ref for s in ev.scores if not s.lossless}
            spreads = {x.spread for x in ev.parity}
            among = {x.spread for x in ev.parity if x.ref not in lossy} or spreads
            lowest = min(among) if len(spreads) > 1 else None
            for q in ev.parity:
                kept: tuple[str, Mark] = ("LOSSY", "!") if q.ref in lossy else ("yes", False)
                prow.append(
                    [(q.ref, False), kept]
                    + [(f"{q.premiums[lang]:.3f}", False) for lang in langs]
                    + [(f"{q.spread:.3f}", q.spread == lowest and (q.ref not in lossy or among == spreads))]
                )
            _table(["version", "lossless"] + langs + ["spread"], prow, right=set(range(2, len(langs) + 3)))
            click.echo("  premium: a language's tokens / the reference's; spread: largest premium / smallest")
    stored = sum(1 for s in ev.scores if s.stored)
    if stored:
        click.echo(
            f"{stored} of {len(ev.scores)} results read from the registry (measured "
            f"{min(s.computed_at for s in ev.scores if s.stored):%Y-%m-%d %H:%M} UTC or later); "
            "--recompute measures again"
        )


@click.command(name="eval")
@click.argument("refs", nargs=-1, required=True, metavar="REF...")
@click.option(
    "--text",
    "texts",
    multiple=True,
    required=True,
    type=click.Path(),
    metavar="FILE",
    help="A text to measure on (repeatable).",
)
@click.option(
    "--lang", "langs", multiple=True, metavar="CODE", help="The language of each --text, in order (repeatable)."
)
@click.option("--parallel", is_flag=True, help="The texts are the same content in different languages: add parity.")
@click.option("--reference", metavar="CODE", help="The reference language for --parallel [default: the first --lang].")
@click.option("--recompute", is_flag=True, help="Measure again even when the registry holds a result.")
@click.option(
    "--plot",
    type=click.Path(dir_okay=False),
    metavar="FILE.png",
    help="Also draw the results as a PNG (needs matplotlib).",
)
@json_option
@db_option
def eval_(
    refs: tuple[str, ...],
    texts: tuple[str, ...],
    langs: tuple[str, ...],
    parallel: bool,
    reference: Optional[str],
    recompute: bool,
    plot: Optional[str],
    as_json: bool,
    db: Optional[str],
) -> None:
    """Measure versions on texts: bytes and characters per token, fertility and continued words
    (Rust et al. 2021), Rényi efficiency (Zouhar et al. 2023), vocabulary use and the unknown
    rate; with --parallel, each language's token premium and their spread (Petrov et al. 2023).

    Results are stored beside the versions (see the evaluations_view in `tokreg sql`); a
    version already measured on the same text is read back unless --recompute.

    \b
    Example:
        tokreg eval cl100k o200k --text en.txt --lang en --text zh.txt --lang zh --parallel
    """
    reg = open_registry(db)
    ev = reg.evaluate(
        list(refs),
        list(texts),
        languages=list(langs) if langs else None,
        parallel=parallel,
        reference=reference,
        recompute=recompute,
    )
    if plot:
        evaluation_png(ev, plot)
    if as_json:
        echo_json(ev.to_json())
    else:
        _print_eval(ev)
        if plot:
            click.echo(f"wrote the chart to {plot}")


def _token_rows(tokens: Sequence[AuditedToken], show: Callable[[AuditedToken], str]) -> list[list[str]]:
    return [
        [
            str(t.id),
            t.shown,
            t.kind,
            "" if t.count is None else f"{t.count:,}",
            "" if t.merge_rank is None else f"{t.merge_rank:,}",
            "" if t.merge_count is None else f"{t.merge_count:,}",
            show(t),
        ]
        for t in tokens
    ]


def _print_audit(r: AuditReport, top: int) -> None:
    click.echo(f"{r.ref}  {r.hash}  ({r.title}, {len(r.tokens):,} tokens)")
    by_id = {t.id: t for t in r.tokens}

    def reencoded(t: AuditedToken) -> str:
        if not t.reencoded:
            return ""
        return "-> " + " ".join(by_id[i].shown if i in by_id else str(i) for i in t.reencoded)

    rows = [[(k.replace("_", " "), False), (f"{n:,}", False)] for k, n in r.categories().items()]
    _table(["category", "tokens"], rows, right={1})
    if r.has_counts:
        click.echo(click.style(f"\nunder-trained (training counts; rare: fewer than {r.rare_below})", bold=True))
        _table(
            ["reason", "tokens"],
            [[(k.replace("_", " "), False), (f"{n:,}", False)] for k, n in r.under_trained().items()],
            right={1},
        )
    else:
        click.echo("\nunder-trained: no training counts (an imported version, or Unigram, which records scores)")
    # uses: in the final segmentation of the training corpus; rank and pairs: of the merge that
    # made the token, and how many times its pair occurred when it was chosen
    headers = ["id", "token", "kind", "uses", "rank", "pairs", "detail"]
    groups: list[tuple[str, list[AuditedToken], Callable[[AuditedToken], str]]] = [
        ("unreachable", [t for t in r.tokens if t.category == "unreachable"], reencoded),
        ("reachable in context", [t for t in r.tokens if t.category == "reachable_in_context"], reencoded),
        ("undecodable", [t for t in r.tokens if t.category == "undecodable"], lambda t: ""),
    ]
    if r.has_counts:
        # merged tokens first: an unused byte is expected, an unused merge is a wasted id
        flagged = sorted((t for t in r.tokens if t.under_trained), key=lambda t: (t.merge_rank is None, t.id))
        groups.append(("under-trained", flagged, lambda t: t.under_trained or ""))
    for title, tokens, detail in groups:
        if not tokens:
            continue
        shown = tokens[:top]
        more = f", the first {len(shown)}" if len(shown) < len(tokens) else ""
        click.echo(click.style(f"\n{title} ({len(tokens):,}{more})", bold=True))
        _table(headers, [[(c, False) for c in row] for row in _token_rows(shown, detail)], right={0, 3, 4, 5})
    if r.stored:
        click.echo(f"\nread from the registry (audited {r.computed_at:%Y-%m-%d %H:%M} UTC); --recompute audits again")


@click.command()
@click.argument("ref")
@click.option(
    "--rare",
    "rare_below",
    type=int,
    default=10,
    show_default=True,
    metavar="N",
    help="Flag tokens used or merged fewer than N times in training.",
)
@click.option(
    "--top", type=click.IntRange(min=0), default=20, show_default=True, help="How many tokens of each list to print."
)
@click.option("--recompute", is_flag=True, help="Audit again even when the registry holds an audit.")
@residue_options
@json_option
@db_option
def audit(
    ref: str,
    rare_below: int,
    top: int,
    recompute: bool,
    residues: bool,
    text: Optional[str],
    below: float,
    min_seen: int,
    as_json: bool,
    db: Optional[str],
) -> None:
    """Find the tokens a model would never see or barely learn (Land & Bartolo 2024): each
    token decoded and encoded again (reachable, only in context, unreachable, undecodable,
    special) and, for trained versions, the tokens that were unused or rare in training.

    The audit is stored beside the version (see the audit_view in `tokreg sql`).

    With --residues --text FILE: the intermediate merge residues of a BPE version (trained or
    imported) on that text, after LiteToken (Sun et al., arXiv 2602.04706): the tokens BPE's
    merge loop forms there but emits in fewer than R of those times.

    \b
    Example:
        tokreg audit gpt-mini@2 --rare 5
        tokreg audit gpt-mini@2 --residues --text held-out.txt
    """
    if residues:
        return residue_audit(ref, text, below, min_seen, top, recompute, as_json, db)
    reg = open_registry(db)
    report = reg.audit(ref, rare_below=rare_below, recompute=recompute)
    if as_json:
        echo_json(report.to_json())
    else:
        _print_audit(report, top)
