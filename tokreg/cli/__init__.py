"""The `tokreg` command: a thin skin over `Registry`. Each command module opens the registry,
calls one library function and prints a table (or --json / --csv); the group (app.py) turns
library errors into one line and an exit code. Commands are registered here, on one group."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from .add_tokens import add_tokens
from .app import cli
from .browse import list_, log, show
from .cache import cache
from .count import count
from .dataset import dataset
from .db import db
from .diff import diff
from .encode import decode, encode
from .evaluate import audit, eval_
from .extend import extend
from .serve import serve
from .sql import sql
from .tokenize import tokenize
from .train import train
from .transfer import export, import_
from .travel import copy, sync
from .versions import pin, reproduce, rm, tag, verify

for command in (
    train,
    extend,
    add_tokens,
    count,
    list_,
    show,
    encode,
    decode,
    sql,
    db,
    tag,
    log,
    rm,
    diff,
    eval_,
    audit,
    pin,
    verify,
    export,
    import_,
    reproduce,
    serve,
    tokenize,
    dataset,
    sync,
    copy,
    cache,
):
    cli.add_command(command)

__all__ = ["cli", "main"]


def main(argv: Optional[Sequence[str]] = None) -> None:
    cli.main(args=argv, prog_name="tokreg")
