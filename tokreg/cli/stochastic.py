"""The options of a seeded stochastic encoding, shared by `tokreg encode` and `tokreg tokenize`
(the library's `dropout=`, `seed=`, `method=`; encoding/stochastic.py)."""

from __future__ import annotations

from typing import Any, Callable

import click

from ..encoding.stochastic import METHODS


def stochastic_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Adds --dropout P, --seed N and --stochastic-method M (passed as `dropout`, `seed`, `method`)."""
    f = click.option(
        "--stochastic-method",
        "method",
        type=click.Choice(METHODS),
        help="The method of --dropout: bpe-dropout, stochastok (split tokens into two that concatenate to them; "
        "Sims et al., arXiv 2506.01687) or unigram [default: the version's own].",
    )(f)
    f = click.option(
        "--seed", type=int, help="The seed of --dropout: the same seed, the same ids, on any thread count."
    )(f)
    return click.option(
        "--dropout",
        type=float,
        default=0.0,
        metavar="P",
        help="A seeded stochastic encoding of strength P (needs --seed): BPE-dropout (Provilkov et al., ACL 2020) "
        "for BPE, Unigram sampling (Kudo, ACL 2018; P is its alpha) for Unigram.",
    )(f)
