"""Looking at the registry: `tokreg list`, `tokreg show`, `tokreg log`."""

from __future__ import annotations

from typing import Any, Optional

import click

from .. import algorithms
from ..errors import InputError
from ..evaluation.charts import rounds_png, rounds_text
from ..versions.details import parity_json
from ..versions.lineage_text import lineage_line
from .common import db_option, echo_json, echo_table, json_option, open_registry, when


@click.command(name="list")
@click.argument("name", required=False)
@json_option
@db_option
def list_(name: Optional[str], as_json: bool, db: Optional[str]) -> None:
    """List tokenizer versions (all, or those of NAME).

    \b
    Example:
        tokreg list --json
    """
    versions = open_registry(db).versions(name)
    if as_json:
        echo_json([algorithms.version_json(v) for v in versions])
        return
    if not versions:
        click.echo("the registry is empty; train one with: tokreg train NAME FILE... --vocab-size N", err=True)
        return
    echo_table(
        ["ref", "algorithm", "vocab", "hash", "created", "same run", "message"],
        [
            [
                v.ref,
                v.algorithm,
                v.vocab_size,
                v.content_hash[:25] + "…",
                v.created_at.strftime("%Y-%m-%d %H:%M"),
                " ".join("@" + r.rsplit("@", 1)[1] for r in v.same_run),
                v.message or "",
            ]
            for v in versions
        ],
    )


@click.command()
@click.argument("ref")
@click.option("--merges", "n_merges", type=int, default=10, show_default=True, help="How many first merges to show.")
@click.option("--history", is_flag=True, help="Also show each training round and a chart of the curve (Unigram).")
@click.option("--plot", type=click.Path(dir_okay=False), help="Write the training curve as a PNG (needs matplotlib).")
@json_option
@db_option
def show(ref: str, n_merges: int, history: bool, plot: Optional[str], as_json: bool, db: Optional[str]) -> None:
    """Show a version: config, training run, token counts, the first merges (or the most
    likely pieces), and with --history the training curve.

    \b
    Example:
        tokreg show gpt-mini@1 --merges 20
        tokreg show sp-mini --history --plot curve.png
    """
    reg = open_registry(db)
    v = reg.resolve(ref)  # once, for both calls
    info = reg.show(v, merges=n_merges)
    rounds = reg.history(v) if history or plot else []
    if plot:
        if not rounds:
            raise InputError(f"{info.ref} has no recorded training rounds (only Unigram training records them)")
        rounds_png(rounds, plot, title=f"{info.ref} training")
    if as_json:
        shown = info.to_json()
        echo_json({**shown, "rounds": [r.to_json() for r in rounds]} if history else shown)
        return
    ver, summary = info.version, info.summary
    click.echo(f"{info.ref}  {ver.content_hash}")
    click.echo(f"  {'sha256':<14}{ver.sha256}")
    click.echo(f"  {'algorithm':<14}{info.title} ({ver.source})")
    click.echo(
        f"  {'vocab size':<14}{ver.vocab_size:,}  "
        + ", ".join(f"{k} {n:,}" for k, n in sorted(summary.tokens_by_kind.items()))
    )
    click.echo(f"  {'merges':<14}{summary.merges:,}")
    click.echo(f"  {'lossless':<14}{'yes' if info.lossless else 'no (decode(encode(s)) may differ from s)'}")
    for r in info.residues:
        click.echo(
            f"  {'residues':<14}{r.residues:,} of {r.measured:,} tokens measured on {r.text} "
            f"(LiteToken; tokreg audit --residues)"
        )
    if info.stochastic:
        click.echo(f"  {'stochastic':<14}{', '.join(info.stochastic)} (encode --dropout P --seed N)")
    click.echo(f"  {'created':<14}{ver.created_at.isoformat()}")
    if ver.message:
        click.echo(f"  {'message':<14}{ver.message}")
    if ver.same_run:
        click.echo(f"  {'same run as':<14}{', '.join(ver.same_run)} (other sizes of one training run)")
    for k, val in sorted(info.config.items()):
        click.echo(f"  {k:<14} {val}" if len(k) >= 14 else f"  {k:<14}{val}")
    chain = info.lineage
    click.echo(f"  {'lineage':<14}{info.ref} " + lineage_line(chain[0].lineage))
    for entry in chain[1:]:
        click.echo(f"  {'':<14}{entry.ref} " + lineage_line(entry.lineage))
    if info.derived:
        click.echo(f"  {'derived':<14}{', '.join(info.derived)}")
    run = info.training_run
    if run:
        click.echo("  training run:")
        click.echo(
            f"    corpus      {run['corpus_fingerprint']}  {run['corpus_bytes']:,} bytes in "
            f"{len(run['corpus_files'])} file(s)"
        )
        for f in run["corpus_files"][:5]:
            click.echo(f"      {f['path'] or f['name']}  {f['size']:,} bytes")
        if len(run["corpus_files"]) > 5:
            click.echo(f"      … and {len(run['corpus_files']) - 5:,} more")
        counting = run.get("counting") or {}
        if counting:
            dropped = counting.get("dropped_pieces") or 0
            click.echo(
                f"    counting    {counting.get('pieces', 0):,} pieces kept, {dropped:,} dropped "
                f"({100 * (counting.get('dropped_mass') or 0):.3f}% of the corpus) within "
                f"{(counting.get('memory_limit') or 0) / 2**30:.1f} GiB; {counting.get('engine', 'local')}"
                + (f", sample of {counting['sample_bytes']:,} bytes" if counting.get("sample_bytes") else "")
            )
        click.echo(
            f"    timings     count {run['count_seconds']:.2f} s, train {run['train_seconds']:.2f} s, "
            f"total {run['total_seconds']:.2f} s, {run['threads']} thread(s)"
        )
        click.echo(f"    tokreg      {run['tokreg_version']}, started {run['started_at']}")
    if summary.first_merges:
        click.echo("  first merges:")
        scored = any(m.score is not None for m in summary.first_merges)
        echo_table(
            ["rank", "left", "right", "result", "count"] + (["score"] if scored else []),
            [
                [m.rank, repr(m.left), repr(m.right), repr(m.result), m.count] + ([f"{m.score:.3g}"] if scored else [])
                for m in summary.first_merges
            ],
        )
    if summary.stages:
        st = summary.stages
        t = "?" if st.transition is None else f"{st.transition:,}"
        click.echo(
            f"  superword stages: transition t = {t} tokens; {st.stage1_merges:,} merges within "
            f"pieces (stage 1), {st.stage2_merges:,} across them (stage 2)"
        )
        if st.first_stage2:
            click.echo("  first stage-2 merges:")
            echo_table(
                ["rank", "left", "right", "result", "count"],
                [[m.rank, repr(m.left), repr(m.right), repr(m.result), m.count] for m in st.first_stage2],
            )
    if info.parity is not None:
        _show_parity(parity_json(info.parity))
    if info.removals is not None:
        rm = info.removals
        tau, below = ver.config.get("threshold"), ver.config.get("residue_below")
        click.echo(
            f"  PickyBPE removals: {rm.events:,} events ({rm.removed_tokens:,} tokens out for good)"
            + (f", IoS threshold tau = {tau}" if tau is not None else "")
            + (
                f", residue rule F1/(F1+F2) < {below} (seen >= {ver.config.get('residue_min_seen')}, "
                f"cost <= {ver.config.get('residue_cost')} x the last merge's count; no IoS: left by it)"
                if below is not None
                else ""
            )
        )
        echo_table(
            ["event", "after merge", "id", "token", "IoS", "count"],
            [
                [r.event, r.after_rank, r.token_id, repr(r.token), f"{r.ios:.3f}" if r.ios is not None else "", r.count]
                for r in rm.first
            ],
        )
    if summary.top_pieces:
        label = str(info.score_label)
        click.echo(f"  highest {label}:")
        echo_table(["id", "piece", label], [[p.id, repr(p.text), f"{p.score:.4f}"] for p in summary.top_pieces])
    if history:
        if not rounds:
            click.echo("  no recorded training rounds (only Unigram training records them)")
            return
        click.echo("  training rounds:")
        echo_table(
            ["round", "phase", "vocab", "log-likelihood"],
            [[r.round, r.phase, f"{r.vocab_size:,}", f"{r.log_likelihood:,.1f}"] for r in rounds],
        )
        likelihoods = [r.log_likelihood for r in rounds if r.log_likelihood is not None]
        for line in rounds_text(likelihoods, title="  log-likelihood by round"):
            click.echo("  " + line)
    if plot:
        click.echo(f"  wrote the training curve to {plot}")


@click.command()
@click.argument("name")
@json_option
@db_option
def log(name: str, as_json: bool, db: Optional[str]) -> None:
    """Show the history of NAME: versions created (and where each came from) and alias moves,
    with times (UTC).

    \b
    Example:
        tokreg log gpt-mini
    """
    rows = open_registry(db).log(name)
    if as_json:
        echo_json([r.to_json() for r in rows])
        return
    echo_table(
        ["time", "event", "ref", "detail", "from", "hash"],
        [
            [
                when(r.at),
                r.event,
                r.ref,
                r.detail,
                lineage_line(r.lineage) if r.lineage is not None else "",
                (r.hash or "")[:25],
            ]
            for r in rows
        ],
    )


def _show_parity(p: dict[str, Any]) -> None:
    """A parity-aware BPE version's languages (`parity_view` in `tokreg sql`)."""
    over = (
        f"Gini {p['gini']:.4f}, premium spread {p['spread']:.3f} on the parallel set"
        if p["parallel"]
        else "no parallel set: the worst language was the one with the fewest bytes per token"
    )
    extra = f"; {p['global_merges']:,} global merges first" if p["global_merges"] else ""
    click.echo(f"  parity-aware BPE (arXiv 2508.04796): {over}{extra}")
    echo_table(
        ["language", "merges", "train bytes/token", "dev bytes", "dev tokens", "premium"],
        [
            [
                c["language"],
                c["merges"],
                f"{c['train_bytes_per_token']:.3f}",
                "" if c["dev_bytes"] is None else c["dev_bytes"],
                "" if c["dev_tokens"] is None else c["dev_tokens"],
                "" if c["premium"] is None else f"{c['premium']:.3f}",
            ]
            for c in p["languages"]
        ],
    )
