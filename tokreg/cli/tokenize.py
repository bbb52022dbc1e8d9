"""`tokreg tokenize`: a corpus into token shards with a manifest (tokreg/datasets/writer.py),
then the dataset's rows in the registry; the same command again resumes an interrupted run."""

from __future__ import annotations

import os
import re
import resource
import sys
from collections.abc import Sequence
from typing import Callable, Optional

import click

from ..datasets import manifest
from ..datasets.engines import ENGINES
from ..datasets.options import DOCUMENTS, FORMATS, ON_BAD, SPECIALS, TokenizeOptions
from ..datasets.writer import memory_bound
from ..datasets.writer import tokenize as run_tokenize
from ..errors import InputError, Interrupted
from ..loading import load
from ..training.progress import Progress
from .common import F, db_option, echo_json, open_registry, progress_option
from .stochastic import stochastic_options

_UNITS = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "KI": 1 << 10, "MI": 1 << 20, "GI": 1 << 30}


def size(text: Optional[str], flag: str) -> int:
    """`1000000`, `1M`, `256Mi`: a count with an optional decimal or binary unit."""
    if text is None:
        return 0
    m = re.fullmatch(r"\s*(\d+)\s*([KMGT]i?)?\s*", text, re.IGNORECASE)
    if m is None or (m.group(2) or "").upper() not in _UNITS:
        raise InputError(f"{flag} takes a number with an optional unit (e.g. 100M, 512Mi), not {text!r}")
    return int(m.group(1)) * _UNITS[(m.group(2) or "").upper()]


def choice(
    flag: str, choices: Sequence[str], default: str, *, help: str, dest: Optional[str] = None
) -> Callable[[F], F]:
    """A `--flag` taking one of `choices`, its default shown in the help."""
    names = (flag, dest) if dest else (flag,)
    option: Callable[[F], F] = click.option(
        *names, type=click.Choice(choices), default=default, show_default=True, help=help
    )
    return option


def counted(n: int, noun: str) -> str:
    """`1 shard`, `2 shards`, `1,000 tokens`: a count and its noun, singular for one."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def totals_line(t: dict[str, int], dtype: str = "") -> str:
    """A dataset's totals as one line of a summary."""
    ids = f" ({dtype})" if dtype else ""
    return (
        f"{counted(t['shards'], 'shard')}, {counted(t['tokens'], 'token')}{ids}, "
        f"{counted(t['documents'], 'document')}, {t['skipped']:,} skipped"
    )


def parse_shard_of(text: Optional[str]) -> Optional[tuple[int, int]]:
    if text is None:
        return None
    m = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if m is None:
        raise InputError(f"--shard-of takes I/N (part I of N, from 0), e.g. 0/8, not {text!r}")
    return int(m.group(1)), int(m.group(2))


def peak_rss() -> int:
    """Bytes of the process's peak resident memory (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


@click.command()
@click.argument("ref")
@click.argument("inputs", nargs=-1, required=True)
@click.option("--output", "-o", "out", required=True, type=click.Path(file_okay=False), help="The dataset folder.")
@choice(
    "--format",
    FORMATS,
    "megatron",
    dest="fmt",
    help="megatron: .bin/.idx; bin: a flat id stream + .docs; npy: .npy + .docs.npy.",
)
@choice(
    "--document",
    DOCUMENTS,
    "auto",
    help="What one document is. auto: a record of JSON Lines/Parquet, a line of plain text (how plain-text "
    "corpora are usually laid out; a whole 1 GB file as one document would be refused); file or paragraph "
    "(blank-line separated) when your documents are those.",
)
@click.option("--field", help="JSON Lines / Parquet: the field holding the text [default: text].")
@click.option("--glob", help="In folders, read only the files whose name matches this pattern.")
@click.option("--bos", metavar="TOKEN", help="A special token put before every document.")
@click.option("--eos", metavar="TOKEN", help="A special token put after every document.")
@click.option("--template", is_flag=True, help="Put the version's own template around every document.")
@choice(
    "--specials", SPECIALS, "text", help="Special-token text inside documents: encoded as text, or as the tokens' ids."
)
@click.option("--shard-tokens", metavar="N", help="Close a shard after the document reaching N ids [default: 256Mi].")
@click.option("--shard-bytes", metavar="N", help="Close a shard after the document reaching N bytes of ids.")
@choice(
    "--on-bad-record",
    ON_BAD,
    "fail",
    help="A malformed, non-UTF-8, empty or over-long document: stop with its file and line, or skip and count it.",
)
@click.option(
    "--max-document-bytes",
    metavar="N",
    default="64Mi",
    show_default=True,
    help="A larger document is a bad record (memory stays bounded).",
)
@click.option(
    "--shard-of",
    metavar="I/N",
    help="Write part I of N (from 0): the I-th of N consecutive runs of the inputs; join with tokreg dataset merge.",
)
@stochastic_options
@click.option("--threads", type=int, default=0, show_default=True, help="Encoder threads (0: one per core).")
@choice(
    "--engine",
    ENGINES,
    "local",
    help="Where documents are encoded: this process, or a Ray cluster's CPUs (pip install 'tokreg[ray]'); "
    "the same bytes either way.",
)
@click.option(
    "--address",
    metavar="ADDR",
    help="--engine ray: the cluster (auto, ray://HOST:10001) [default: RAY_ADDRESS, else a local Ray for this run].",
)
@progress_option
@click.option("--no-record", is_flag=True, help="Do not record the dataset in the registry.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@db_option
def tokenize(
    ref: str,
    inputs: tuple[str, ...],
    out: str,
    fmt: str,
    document: str,
    field: Optional[str],
    glob: Optional[str],
    bos: Optional[str],
    eos: Optional[str],
    template: bool,
    specials: str,
    shard_tokens: Optional[str],
    shard_bytes: Optional[str],
    on_bad_record: str,
    max_document_bytes: str,
    shard_of: Optional[str],
    dropout: float,
    seed: Optional[int],
    method: Optional[str],
    threads: int,
    engine: str,
    address: Optional[str],
    progress_mode: str,
    no_record: bool,
    as_json: bool,
    db: Optional[str],
) -> None:
    """Encode a corpus (files, folders, gz/xz/zst, JSON Lines, Parquet, - for stdin) with a
    version into training shards in DIR, with a manifest.json naming the tokenizer's hash, and
    record the dataset in the registry. With --dropout and --seed, a seeded stochastic encoding
    (BPE-dropout, StochasTok or Unigram sampling), recorded in the manifest.

    The same command again after an interruption (Ctrl-C, kill -9, a full disk) continues
    after the last complete shard and ends with the bytes of an uninterrupted run. A folder
    made by another tokenizer or other options is refused.

    \b
    Example:
        tokreg tokenize gpt-mini@1 web.jsonl.zst -o data/web --eos '<|endoftext|>'
        tokreg tokenize gpt-mini corpus/ --glob '*.txt' --document paragraph --format npy -o data/books
        tokreg tokenize gpt-mini web/ --glob '*.jsonl.zst' -o data/web --engine ray --address auto
    """
    tok = load(ref, db=db)
    drawn = tok.stochastic_options(dropout, seed, method)
    opts = TokenizeOptions(
        format=fmt,
        document=document,
        bos=bos,
        eos=eos,
        template=template,
        specials=specials,
        shard_tokens=size(shard_tokens, "--shard-tokens"),
        shard_bytes=size(shard_bytes, "--shard-bytes"),
        on_bad_record=on_bad_record,
        max_document_bytes=size(max_document_bytes, "--max-document-bytes"),
        glob=glob,
        field=field,
        shard_of=parse_shard_of(shard_of),
        dropout=drawn.p if drawn else 0.0,
        seed=drawn.seed if drawn else None,
        method=drawn.method if drawn else None,
    )
    progress = Progress.for_mode("none" if as_json and progress_mode == "auto" else progress_mode)
    try:
        summary = run_tokenize(
            tok, list(inputs), out, opts, threads=threads, progress=progress, engine=engine, address=address
        )
    except KeyboardInterrupt:
        kept = manifest.read(out) if os.path.isdir(out) else None
        shards = len(kept["shards"]) if kept else 0
        raise Interrupted(
            f"interrupted; {out} keeps {counted(shards, 'complete shard')} and nothing was written to the registry: "
            "run the same command again to resume"
        ) from None
    finally:
        progress.clear()
    doc = summary.manifest
    recorded = None
    if not no_record:
        reg = open_registry(db)
        row, new = reg.record_dataset(doc, summary.folder)
        recorded = {"id": row, "new": new, "registry": reg.where}
    totals = doc["totals"]
    rate = summary.text_bytes / summary.seconds if summary.seconds > 0 else 0.0
    figures = {
        "folder": summary.folder,
        "dataset_hash": doc["dataset_hash"],
        "tokenizer": doc["tokenizer"],
        "format": doc["options"]["format"],
        "dtype": doc["dtype"],
        **totals,
        "resumed": summary.resumed,
        "already_complete": summary.already_complete,
        "seconds": round(summary.seconds, 3),
        "mb_per_s": round(rate / 1e6, 2),
        "tokens_per_s": round(summary.tokens_written / summary.seconds, 1) if summary.seconds > 0 else 0.0,
        "peak_rss": peak_rss(),
        "memory_bound": memory_bound(opts),
        "recorded": recorded,
    }
    if as_json:
        echo_json(figures)
        return
    what = "already complete" if summary.already_complete else ("resumed and finished" if summary.resumed else "wrote")
    click.echo(f"{what} {summary.folder}: {totals_line(totals, doc['dtype'])}")
    if not summary.already_complete:
        click.echo(
            f"{summary.seconds:,.1f} s, {rate / 1e6:,.1f} MB/s, {figures['tokens_per_s']:,.0f} tokens/s, "
            f"peak memory {figures['peak_rss'] / 2**20:,.0f} MiB"
        )
    click.echo(f"dataset {doc['dataset_hash']} by {tok.ref} ({tok.hash})")
