"""The `tokreg` command: a thin skin over `Registry`. Each command module opens the registry,
calls one library function and prints a table (or --json / --csv); the group (app.py) turns
library errors into one line and an exit code. Commands are registered here, on one group, by
name, and imported on use."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Optional

from .app import cli, run

#: Every command, in the order `tokreg --help` lists them: name -> (module, function). A command's
#: module is imported when the command is run (or listed by --help), not before: `tokreg train`
#: does not pay for the evaluation, diff, serve and chart modules.
COMMANDS = {
    "train": ("train", "train"),
    "extend": ("extend", "extend"),
    "add-tokens": ("add_tokens", "add_tokens"),
    "drop-residues": ("drop_residues", "drop_residues"),
    "count": ("count", "count"),
    "list": ("browse", "list_"),
    "show": ("browse", "show"),
    "encode": ("encode", "encode"),
    "decode": ("encode", "decode"),
    "sql": ("sql", "sql"),
    "db": ("db", "db"),
    "tag": ("versions", "tag"),
    "log": ("browse", "log"),
    "rm": ("versions", "rm"),
    "diff": ("diff", "diff"),
    "eval": ("evaluate", "eval_"),
    "audit": ("evaluate", "audit"),
    "pin": ("versions", "pin"),
    "verify": ("versions", "verify"),
    "export": ("transfer", "export"),
    "import": ("transfer", "import_"),
    "reproduce": ("versions", "reproduce"),
    "serve": ("serve", "serve"),
    "tokenize": ("tokenize", "tokenize"),
    "dataset": ("dataset", "dataset"),
    "sync": ("travel", "sync"),
    "copy": ("travel", "copy"),
    "cache": ("cache", "cache"),
}
cli.lazy_commands.update({name: (f"{__name__}.{module}", attr) for name, (module, attr) in COMMANDS.items()})

__all__ = ["cli", "main"]


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Runs `tokreg` with `argv` (the process's arguments when None) and exits with its status."""
    sys.exit(run(sys.argv[1:] if argv is None else argv))
