"""How the commands that derive a version (`extend`, `add-tokens`, `drop-residues`) and `show`/`log` print a
version's lineage: where it came from and what its derivation recorded (the line itself:
versions/lineage_text.py, which the version page of `tokreg serve` shows too)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..data import Lineage, VersionInfo
from ..versions.lineage_text import lineage_line
from .common import echo_json, say_created

if TYPE_CHECKING:
    from ..registry import Registry


def echo_derived(v: VersionInfo, line: Lineage) -> None:
    click.echo(f"{v.ref}  {v.content_hash}")
    click.echo(f"  {v.vocab_size:,} tokens, {lineage_line(line)}")
    d = line.details or {}
    if d.get("first_new_id") is not None:
        click.echo(f"  new ids from {d['first_new_id']:,}")


def echo_created(reg: Registry, v: VersionInfo, as_json: bool) -> None:
    """What a deriving command prints once its version is written: its lineage (JSON), or the
    ref, hash and lineage line."""
    say_created(reg)
    chain = reg.lineage(v)
    if as_json:
        echo_json({**v.to_json(), "lineage": [e.to_json() for e in chain]})
        return
    echo_derived(v, chain[0].lineage)
