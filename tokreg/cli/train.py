"""`tokreg train`: the common options, plus each algorithm's own, made from the `flag()` fields
of its options class (algorithms/<family>/training.py), so its options live there only (read
from them ahead of time into train_flags.py, so that the command does not import every
trainer to offer their options). An option given for another algorithm than `--algo` is
refused, never ignored."""

from __future__ import annotations

import collections
import dataclasses
from typing import Any, Optional

import click

from .. import _core, algorithms, console
from ..algorithms import template
from ..data import column
from ..errors import InputError, Interrupted
from ..training import budget, round_trip, train_run
from ..training.corpus import Corpus
from ..training.progress import Progress
from . import train_flags
from .common import db_option, echo_json, json_option, progress_option, remember, say_created
from .opening import Opening

FLAGS = train_flags.FLAGS


def _spec(name: str) -> str:
    return FLAGS[name][0]


def _given(name: str, value: Any) -> bool:
    """Whether the user gave the option: not None, and for a plain on-flag not False (an on/off
    pair such as --strip-accents/--keep-accents is given when it is True or False)."""
    return value is not None and value != () and (value is not False or "/" in _spec(name))


def _option(name: str) -> Any:
    """A click option for one field name (`train_flags.FLAGS`), shared by the algorithms that have it."""
    spec, _, rendered = FLAGS[name]
    attrs = dict(rendered)
    kind = attrs.pop("type", None)
    if isinstance(kind, tuple):  # the choices
        attrs["type"] = click.Choice(list(kind))
    elif kind is not None:
        attrs["type"] = {"str": str, "int": int, "float": float}[kind]
    return click.option(spec, name, **attrs)


def _options_for(algo: str, given: dict[str, Any], common: dict[str, Any]) -> algorithms.TrainOptions:
    cls = algorithms.options_type(algo)
    own = cls.field_names()
    for key, value in given.items():
        if _given(key, value) and key not in own:
            owners = " or ".join(FLAGS[key][1])
            raise InputError(f"{_spec(key).split('/')[0]} applies to --algo {owners}, not {algo}")
    for key, value in common.items():
        if key not in own and value:
            takers = " or ".join(c.run_name for c in algorithms.option_types() if key in c.field_names())
            raise InputError(f"--{key.replace('_', '-')} applies to --algo {takers}, not {algo}")
    for f in cls.fields():
        choices = f.metadata.get("choices")
        value = given.get(f.name)
        if choices and _given(f.name, value) and value not in choices:
            raise InputError(f"{_spec(f.name)} {value} is not one of --algo {algo}'s: {', '.join(choices)}")
    kwargs = {k: v for k, v in common.items() if k in own}
    kwargs.update({k: v for k, v in given.items() if k in own and _given(k, v)})
    return cls(**kwargs)


def _with_algorithm_options(f: Any) -> Any:
    for name in reversed(list(FLAGS)):
        f = _option(name)(f)
    return f


def vocab_sizes(text: str) -> list[int]:
    """`32000` or `8000,16000,32000`."""
    try:
        sizes = [int(x) for x in str(text).split(",")]
    except ValueError:
        raise InputError(f"--vocab-size {text!r} is not a size or a comma-separated list of sizes") from None
    return sizes


def input_options(f: Any) -> Any:
    """How the corpus is read: shared by `train` and `count`."""
    f = click.option(
        "--glob", metavar="PATTERN", help="In folders, read only files whose name matches (e.g. '*.txt')."
    )(f)
    f = click.option(
        "--field", metavar="NAME", help="JSON Lines / Parquet: the field holding the text [default: text]."
    )(f)
    f = click.option(
        "--memory-limit",
        metavar="SIZE",
        help="Memory budget, e.g. 4G: counting spills to disk beyond it, and training keeps the most frequent "
        "pieces that fit [default: half the machine's memory].",
    )(f)
    f = click.option("--max-piece-bytes", type=int, default=0, help="Cut longer pieces when counting (0: no limit).")(f)
    f = click.option("--sample-bytes", type=int, default=0, help="Read only about N bytes of text (0: all).")(f)
    f = click.option(
        "--threads", type=int, default=0, show_default=True, help="Counting and training threads (0 = one per core)."
    )(f)
    f = click.option("--dask", "engine", metavar="ADDRESS", help="Count on this Dask scheduler (tcp://host:8786).")(f)
    return progress_option(f)


def common_options(
    vocab_size: int, min_frequency: int, special: tuple[str, ...], threads: int, memory: Optional[str], **more: Any
) -> dict[str, Any]:
    return {
        "vocab_size": vocab_size,
        "min_frequency": min_frequency,
        "special": special,
        "threads": threads,
        "memory_limit": budget.parse(memory) if memory else None,
        **more,
    }


@click.command()
@click.argument("name")
@click.argument("inputs", nargs=-1, type=click.Path(allow_dash=True))
@click.option(
    "--algo",
    type=click.Choice(sorted(train_flags.ALGORITHMS)),
    default="bpe",
    show_default=True,
    help="Training algorithm.",
)
@click.option(
    "--vocab-size",
    "vocab_size_text",
    required=True,
    metavar="N[,N...]",
    help="Total tokens, base alphabet and special tokens included; several sizes (8000,16000,32000) record one "
    "linked version each from one run.",
)
@click.option("--min-frequency", type=int, default=0, show_default=True, help="Never merge a rarer pair.")
@click.option("--special", "special", multiple=True, metavar="TOKEN", help="Add a special token (repeatable).")
@click.option("--bos", metavar="TOKEN", help="Put this special token before a text with add_special_tokens=True.")
@click.option("--eos", metavar="TOKEN", help="Put this special token after a text with add_special_tokens=True.")
@click.option(
    "--template",
    "template_spec",
    metavar="TEMPLATE",
    help='What add_special_tokens=True makes of a text, e.g. "[CLS] $A [SEP]" (a pair form after " | "). '
    "Its tokens become special tokens.",
)
@click.option("--from-counts", "counts", type=click.Path(dir_okay=False), help="Train from a `tokreg count` file.")
@click.option("--message", "-m", help="A note stored with the version.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display (same as --progress none).")
@input_options
@_with_algorithm_options
@json_option
@db_option
def train(
    name: str,
    inputs: tuple[str, ...],
    algo: str,
    vocab_size_text: str,
    min_frequency: int,
    special: tuple[str, ...],
    bos: Optional[str],
    eos: Optional[str],
    template_spec: Optional[str],
    counts: Optional[str],
    message: Optional[str],
    quiet: bool,
    glob: Optional[str],
    field: Optional[str],
    memory_limit: Optional[str],
    max_piece_bytes: int,
    sample_bytes: int,
    threads: int,
    engine: Optional[str],
    progress_mode: str,
    as_json: bool,
    db: Optional[str],
    **given: Any,
) -> None:
    """Train a tokenizer on INPUTS and record it as the next version of NAME.

    An input is a file, a folder (every file under it; --glob filters), a .gz/.xz/.zst file,
    - for standard input, or a JSON Lines / Parquet file (--field names the text).

    --algo superbpe trains superword tokens (SuperBPE, Liu et al. 2025, arXiv 2503.13423): byte-level
    BPE up to --transition, then merges across spaces within runs of --max-words pre-tokens.

    --algo parity-bpe trains parity-aware BPE (Foroutan et al. 2025, arXiv 2508.04796): each merge
    goes to the language compressed worst so far (most tokens on the --parallel texts, or fewest
    bytes per token on its own training text), not to the most frequent pair overall. Inputs carry
    their language with --lang CODE=PATH (a file, or a folder per language). The result is a
    plain byte-level BPE version (exports to tokenizer.json and .tiktoken), with each merge's
    language and per-language gain recorded.
    --algo picky trains PickyBPE (Chizhov et al. 2024, arXiv 2409.04599): byte-level BPE that,
    after each merge, removes a part of the pair whose Intersection over Self f(pair)/f(part) is
    above --threshold, splitting it back into its parents; the removals are recorded beside the
    merges and encoding replays both in order. Its residue rule (--residue-below R) judges
    LiteToken's intermediate merge residues (Sun et al. 2026, arXiv 2602.04706) on the training
    text as it goes: a token whose F1/(F1+F2) falls below R stays a merge step and leaves the
    vocabulary after the last merge while its F1 is within --residue-cost K times the last
    merge's count (Scaffold-BPE's budget, Lian et al. 2024, arXiv 2404.17808), the slot going to
    another merge, so the vocabulary keeps the size asked.

    \b
    Example:
        tokreg train web web.jsonl.zst --field text --vocab-size 32000 --memory-limit 4G
        tokreg train bert-mini corpus/*.txt --algo wordpiece --vocab-size 8000 --lowercase --special [CLS]
        tokreg train sp-mini corpus/*.txt --algo unigram --vocab-size 8000 --bos '<s>' --eos '</s>'
        tokreg train gpt-mini corpus/ --glob '*.txt' --vocab-size 8000,16000,32000 --pattern cl100k
        tokreg train super corpus/*.txt --algo superbpe --vocab-size 32000 --transition 28800
        tokreg train fair --algo parity-bpe --lang en=corpus/en/ --lang zh=corpus/zh/ --vocab-size 16000
        tokreg train picky corpus/*.txt --algo picky --vocab-size 8000 --threshold 0.9
        tokreg train lean corpus/*.txt --algo picky --vocab-size 8000 --threshold 2 --residue-below 0.1
    """
    sizes = vocab_sizes(vocab_size_text)
    if not inputs and counts is None and not given.get("lang"):
        raise click.UsageError("give corpus INPUTS (files, folders, -) or --from-counts FILE")
    spec = template.spec(template_spec, bos=bos, eos=eos)
    special += tuple(t for t in template.spec_tokens(spec, None, None) if t not in special)
    common = common_options(
        max(sizes),
        min_frequency,
        special,
        threads,
        memory_limit,
        max_piece_bytes=max_piece_bytes,
        sample_bytes=sample_bytes,
        template=spec,
    )
    opts = _options_for(algo, given, common)
    # This process ends after training: its trainer's growing arrays may be mapped apart from
    # the heap, so that each doubling does not leave a hole the heap keeps (memory.rs).
    _core.map_large_blocks_in_training()
    # The registry opens on a thread while the core trains (opening.py); what it finds wrong
    # stops the run at its next progress report.
    opening = Opening(db, name)
    progress = Progress.for_mode("none" if quiet or (as_json and progress_mode == "auto") else progress_mode)
    try:
        corpus = Corpus.of(inputs, glob=glob, field=field, counts=counts, engine=engine)
        unmeasured = train_run.train_unmeasured(corpus, opts, sizes, progress=opening.guard(progress))
    except (KeyboardInterrupt, Interrupted):
        opening.abandon()
        raise Interrupted("interrupted while training; nothing was written to the registry") from None
    except BaseException:
        opening.abandon()
        raise
    finally:
        progress.clear()
    # The measure of each version on its corpus (printed, not recorded) is made on a thread
    # (after compiling the versions' encoders there) while the versions are written; the write
    # waits for it before it commits, so a measure that fails (or a Ctrl-C while it is made)
    # leaves the registry as it was.
    measured = unmeasured.measure_in_background()
    opening.before_samples = measured.compiled
    reg = remember(opening.registry())
    if not opening.lean:
        measured.compiled()  # a Registry encodes the samples first: with the encoders compiled once
    recorded = reg.record_trained(name, unmeasured.versions, message=message, ready=measured)
    by_hash = {v.content_hash: v for v in measured()}
    recorded = [dataclasses.replace(r, version=by_hash[r.version.content_hash]) for r in recorded]
    say_created(reg)
    # What is left is output: the registry is closed by the group as this returns, the
    # opening and measuring threads are done, and the corpus was only read.
    console.leave_at_once()
    versions = [r.info for r in recorded]
    if as_json:
        shown = [
            {**algorithms.version_json(r.info), "round_trip": r.version.round_trip and r.version.round_trip.to_json()}
            for r in recorded
        ]
        echo_json(shown if len(sizes) > 1 else shown[-1])
        return
    for v, trained in ((r.info, r.version) for r in recorded):
        run = trained.run or {}
        by_kind = collections.Counter(column(trained.data.tokens, "kind"))  # no row object per token
        kinds = ", ".join(f"{n:,} {k}" for k, n in sorted(by_kind.items()))
        click.echo(f"{v.ref}  {v.content_hash}")
        model = algorithms.model_of(v.algorithm, v.config)
        n_merges = len(trained.data.merges)
        merges = f", {n_merges:,} merges" if n_merges else ""
        click.echo(f"  {model.title}, {v.vocab_size:,} tokens ({kinds}){merges}")
        if run:
            dropped = (run.get("counting") or {}).get("dropped_pieces") or 0
            note = f"; {dropped:,} rare pieces dropped to fit the memory limit" if dropped else ""
            click.echo(
                f"  corpus {run['corpus_bytes'] / 1e6:,.1f} MB in {len(run['corpus_files'])} file(s), "
                f"trained in {run['total_seconds']:.2f} s{note}"
            )
        loss = round_trip.summary(trained.round_trip, model.lossy_by_design(model.parse_config(v.config)))
        if loss:
            click.echo(f"  {loss}")
    if len(versions) > 1:
        click.echo(f"  {len(versions)} sizes from one run: {', '.join(v.ref for v in versions)}")
    if len(versions) < len(set(sizes)):
        click.echo(
            f"  the corpus gave only {versions[-1].vocab_size:,} tokens: sizes above it were recorded once, as "
            f"{versions[-1].ref}"
        )
