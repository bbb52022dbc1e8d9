"""`tokreg extend`: continue training a version on a new corpus into a new version that keeps
every id of the base (one `Registry.extend` call)."""

from __future__ import annotations

from typing import Optional

import click

from ..training import budget
from ..training.progress import Progress
from .common import db_option, json_option, open_registry
from .derived import echo_created


@click.command()
@click.argument("base")
@click.argument("name")
@click.argument("inputs", nargs=-1, type=click.Path(allow_dash=True))
@click.option("--add", "add", type=int, required=True, metavar="N", help="New tokens to learn (exactly N, or refused).")
@click.option(
    "--renumber-specials",
    is_flag=True,
    help="Move BASE's special tokens after the new tokens (changes their ids; by default they keep them).",
)
@click.option(
    "--keep-text",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Learn no token that would change how FILE encodes: its ids stay BASE's on every line.",
)
@click.option(
    "--check-text",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Count the lines of FILE that encode differently after the extension (stored with the version).",
)
@click.option(
    "--objective",
    type=click.Choice(["frequency", "likelihood", "ratio"]),
    help="WordPiece: what ranks the new merges (as `tokreg train --objective`) "
    "[default: the one BASE's merges were ranked by].",
)
@click.option("--glob", metavar="PATTERN", help="In folders, read only files whose name matches (e.g. '*.txt').")
@click.option("--field", metavar="NAME", help="JSON Lines / Parquet: the field holding the text [default: text].")
@click.option("--memory-limit", metavar="SIZE", help="Memory budget for counting, e.g. 4G.")
@click.option("--threads", type=int, default=0, show_default=True, help="Threads (0 = one per core).")
@click.option("--message", "-m", help="A note stored with the version.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@json_option
@db_option
def extend(
    base: str,
    name: str,
    inputs: tuple[str, ...],
    add: int,
    renumber_specials: bool,
    keep_text: Optional[str],
    check_text: Optional[str],
    objective: Optional[str],
    glob: Optional[str],
    field: Optional[str],
    memory_limit: Optional[str],
    threads: int,
    message: Optional[str],
    quiet: bool,
    as_json: bool,
    db: Optional[str],
) -> None:
    """Continue training BASE on INPUTS and record BASE + N new tokens as the next version of
    NAME. Every id of BASE is kept (same bytes, same merges at the same ranks, same special
    tokens); the new tokens take the ids after BASE's highest. BPE (byte-level, including
    imported tiktoken vocabularies, and character-level) continues merging after BASE's merges;
    Unigram re-estimates new pieces with EM beside BASE's, whose scores stay as they are;
    WordPiece continues merging, ranked as BASE's merges were (or by --objective).

    \b
    Example:
        tokreg extend cl100k_base cl100k-zh zh.txt --add 5000 --keep-text en.txt
    """
    reg = open_registry(db)
    progress = Progress.for_mode("none" if quiet or as_json else "auto")
    try:
        v = reg.extend(
            base,
            name,
            list(inputs),
            add,
            renumber_specials=renumber_specials,
            keep_text=keep_text,
            check_text=check_text,
            threads=threads,
            memory_limit=budget.parse(memory_limit) if memory_limit else None,
            glob=glob,
            field=field,
            message=message,
            progress=progress,
            objective=objective,
        )
    finally:
        progress.clear()
    echo_created(reg, v, as_json)
