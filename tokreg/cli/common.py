"""What the command modules share: the `--db`, `--json` and `--progress` options, opening the registry, and
printing tables and JSON. A command hands its REF arguments to `Registry` as they were typed
(or resolves one once, with `Registry.resolve`, when it makes several calls on it): pins are
applied there, never here."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar

import click

from .app import REGISTRY

if TYPE_CHECKING:  # imported on use: `tokreg train` opens the registry while it trains (train.py)
    from ..registry import Registry
    from .opening import Recorder

F = TypeVar("F", bound=Callable[..., Any])
#: What a command remembers as its registry: a `Registry`, or `tokreg train`'s lean recorder.
R = TypeVar("R")


def db_option(f: F) -> F:
    return click.option(
        "--db",
        metavar="PATH_OR_URL",
        envvar="TOKREG_DB",
        help="Registry location: a SQLite path or an SQLAlchemy URL [env TOKREG_DB; default: the XDG data dir].",
    )(f)


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")(f)


def progress_option(f: F) -> F:
    """`--progress` of the long-running commands (train, tokenize), read by training/progress.py."""
    return click.option(
        "--progress",
        "progress_mode",
        type=click.Choice(["auto", "bar", "json", "none"]),
        default="auto",
        show_default=True,
        help="Progress on stderr: a bar on a terminal (auto), always (bar), one JSON object per line (json), or none.",
    )(f)


def open_registry(db: Optional[str]) -> Registry:
    """The registry the command works on, remembered so that an interruption is reported from
    what it holds (app.py)."""
    # On use: a command module that imports this one does not load SQLAlchemy until it opens one.
    from ..registry import Registry

    return remember(Registry(db))


def remember(reg: R) -> R:
    """`reg` remembered as the registry of the running command (see `open_registry`)."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta[REGISTRY] = reg
    return reg


def say_created(reg: Recorder) -> None:
    """The note a write prints when it created the registry (on stderr: stdout may be JSON)."""
    if reg.created:
        click.echo(f"created a new registry at {reg.where}", err=True)


def cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, (bytes, memoryview)):
        return "0x" + bytes(v).hex()
    return str(v)


def json_default(v: Any) -> Any:
    if isinstance(v, (bytes, memoryview)):
        return "0x" + bytes(v).hex()
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


def echo_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, default=json_default))


def echo_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [[cell(c).replace("\n", "\\n") for c in r] for r in rows]
    widths = [len(h) for h in headers]
    for r in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, r)]
    click.echo("  ".join(h.upper().ljust(w) for h, w in zip(headers, widths)).rstrip())
    for r in cells:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


def when(dt: Any) -> str:
    return str(dt.strftime("%Y-%m-%d %H:%M:%S"))
