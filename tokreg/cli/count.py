"""`tokreg count`: counts a corpus into a counts file (or sums counts files), the artifact that
`tokreg train --from-counts` trains from and that several machines can each make and merge."""

from __future__ import annotations

from typing import Any, Optional

import click

from ..training import train_run
from ..training.corpus import Corpus
from ..training.progress import Progress
from . import train_flags
from .common import echo_json, json_option
from .train import _options_for, _with_algorithm_options, common_options, input_options


@click.command()
@click.argument("inputs", nargs=-1, type=click.Path(allow_dash=True))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The counts file to write.")
@click.option("--merge", is_flag=True, help="INPUTS are counts files to sum (counted alike), not a corpus.")
@click.option(
    "--algo",
    type=click.Choice(sorted(train_flags.ALGORITHMS)),
    default="bpe",
    show_default=True,
    help="Count as this algorithm trains (its pattern or normalizer options apply).",
)
@input_options
@_with_algorithm_options
@json_option
def count(
    inputs: tuple[str, ...],
    output: str,
    merge: bool,
    algo: str,
    glob: Optional[str],
    field: Optional[str],
    memory_limit: Optional[str],
    max_piece_bytes: int,
    sample_bytes: int,
    threads: int,
    engine: Optional[str],
    progress_mode: str,
    as_json: bool,
    **given: Any,
) -> None:
    """Count the pieces of a corpus (as --algo and its options cut text) into a counts file,
    or sum counts files with --merge. Train from it with `tokreg train NAME --from-counts FILE`.

    \b
    Example:
        tokreg count corpus/ --glob '*.txt' --pattern cl100k -o part1.counts
        tokreg count --merge part1.counts part2.counts -o all.counts
        tokreg count corpus/ -o all.counts --dask tcp://scheduler:8786
    """
    if not inputs:
        raise click.UsageError("give corpus INPUTS (or counts files with --merge)")
    if merge:
        out = train_run.merge_counts_files(list(inputs), output)
    else:
        common = common_options(
            1, 0, (), threads, memory_limit, max_piece_bytes=max_piece_bytes, sample_bytes=sample_bytes
        )
        opts = _options_for(algo, given, common)
        progress = Progress.for_mode("none" if as_json and progress_mode == "auto" else progress_mode)
        try:
            corpus = Corpus.of(inputs, glob=glob, field=field, engine=engine)
            out = train_run.count_to_file(corpus, opts, output, progress=progress)
        finally:
            progress.clear()
    if as_json:
        echo_json(out)
        return
    click.echo(
        f"{out['output']}: {out['pieces']:,} distinct pieces, {out['total']:,} in all, from {out['files']} file(s) "
        f"({out['input_bytes'] / 1e6:,.1f} MB) in {out['seconds']:.2f} s"
    )
