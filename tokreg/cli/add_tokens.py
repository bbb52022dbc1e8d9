"""`tokreg add-tokens`: append user tokens to a version as a new version, ids after the base's
(one `Registry.add_tokens` call)."""

from __future__ import annotations

from typing import Optional

import click

from .common import db_option, json_option, open_registry
from .derived import echo_created


@click.command(name="add-tokens")
@click.argument("base")
@click.argument("name")
@click.argument("tokens", nargs=-1, required=True)
@click.option("--special", is_flag=True, help="Add them as special tokens (matched before the algorithm).")
@click.option(
    "--check-text",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Count the lines of FILE that encode differently after adding (stored with the version).",
)
@click.option("--message", "-m", help="A note stored with the version.")
@json_option
@db_option
def add_tokens(
    base: str,
    name: str,
    tokens: tuple[str, ...],
    special: bool,
    check_text: Optional[str],
    message: Optional[str],
    as_json: bool,
    db: Optional[str],
) -> None:
    """Record BASE + TOKENS as the next version of NAME, with ids after BASE's highest.

    With --special they are special tokens, for every algorithm. Otherwise they are ordinary
    tokens of BASE's algorithm: BPE builds each by merges ranked after BASE's, WordPiece adds
    vocabulary entries, Unigram user-defined pieces.

    \b
    Example:
        tokreg add-tokens cl100k_base chat '<|im_start|>' '<|im_end|>' --special
    """
    reg = open_registry(db)
    v = reg.add_tokens(base, name, list(tokens), special=special, check_text=check_text, message=message)
    echo_created(reg, v, as_json)
