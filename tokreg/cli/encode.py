"""Using a version: `tokreg encode` and `tokreg decode`, through `tokreg.load` (so a project's
pins apply, and a pinned name loads from the registry it was pinned from)."""

from __future__ import annotations

import sys
from typing import Optional

import click

from ..encoding.tokenizer import Specials
from ..errors import InputError, SpecialTokenError
from ..files import read_text
from ..loading import load
from .common import db_option, echo_json, json_option
from .stochastic import stochastic_options


@click.command()
@click.argument("ref")
@click.argument("text", required=False)
@click.option("--file", "-f", "file", type=click.Path(), help="Encode the contents of this file instead.")
@click.option("--allow-special", is_flag=True, help="Turn special-token strings in the text into their ids.")
@click.option("--special-as-text", is_flag=True, help="Encode special-token strings in the text as ordinary text.")
@click.option(
    "--count",
    "count_only",
    is_flag=True,
    help="Print only the number of tokens (no ids are listed). `tokreg count` is corpus counting for training.",
)
@stochastic_options
@json_option
@db_option
def encode(
    ref: str,
    text: Optional[str],
    file: Optional[str],
    allow_special: bool,
    special_as_text: bool,
    count_only: bool,
    dropout: float,
    seed: Optional[int],
    method: Optional[str],
    as_json: bool,
    db: Optional[str],
) -> None:
    """Encode TEXT (or --file, or stdin) with a version; print the ids, or with --count the
    number of tokens.

    Special-token strings in the text follow the Python API's rule: refused unless you say
    what they are, --allow-special (their ids) or --special-as-text (ordinary text).

    --dropout P --seed N draws a seeded stochastic encoding: BPE-dropout (Provilkov et al.,
    ACL 2020) for BPE, Unigram sampling (Kudo, ACL 2018) for Unigram, or with
    --stochastic-method stochastok, StochasTok (Sims et al., arXiv 2506.01687).

    \b
    Example:
        tokreg encode gpt-mini@1 "hello world"
        tokreg encode gpt-mini@1 --file README.md --count
        tokreg encode gpt-mini@1 "unbelievable" --dropout 0.1 --seed 7
    """
    if file is not None and text is not None:
        raise InputError("give TEXT or --file, not both")
    if file is not None:
        text = read_text(file)
    elif text is None:
        text = sys.stdin.read()
    if allow_special and special_as_text:
        raise InputError("give --allow-special or --special-as-text, not both")
    tok = load(ref, db=db)
    allowed: Specials = "all" if allow_special else frozenset()
    disallowed: Specials = () if special_as_text else "all"
    try:
        if count_only and not dropout:
            n = tok.count(text, allowed_special=allowed, disallowed_special=disallowed)
        else:
            ids = tok.encode(
                text, allowed_special=allowed, disallowed_special=disallowed, dropout=dropout, seed=seed, method=method
            )
            n = len(ids)
    except SpecialTokenError as e:
        raise InputError(
            f"the text contains the special token {e.token!r}; pass --allow-special to encode it as a special "
            "token, or --special-as-text to encode it as ordinary text"
        ) from None
    if count_only:
        if as_json:
            echo_json({"ref": tok.ref, "hash": tok.hash, "count": n})
        else:
            click.echo(n)
        return
    if as_json:
        echo_json(
            {
                "ref": tok.ref,
                "hash": tok.hash,
                "ids": ids,
                "tokens": [tok.token_bytes(i).decode("utf-8", "replace") for i in ids],
            }
        )
    else:
        click.echo(" ".join(map(str, ids)))


@click.command()
@click.argument("ref")
@click.argument("ids", nargs=-1, required=True, type=int)
@db_option
def decode(ref: str, ids: tuple[int, ...], db: Optional[str]) -> None:
    """Decode token IDS with a version; print the text.

    \b
    Example:
        tokreg decode gpt-mini@1 31373 995
    """
    click.echo(load(ref, db=db).decode(list(ids)))
