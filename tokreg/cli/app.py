"""The `tokreg` group: the one place where library errors and Ctrl-C become one line on stderr
and the exit code of their class (see errors.py); never a traceback."""

from __future__ import annotations

from typing import Any

import click

from ..errors import Interrupted, TokregError


class TokregGroup(click.Group):
    """Turns library errors and Ctrl-C into one line and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except TokregError as e:
            click.echo(f"tokreg: error: {e}", err=True)
            ctx.exit(e.exit_code)
        except KeyboardInterrupt:
            click.echo(f"tokreg: error: {Interrupted('interrupted')}", err=True)
            ctx.exit(Interrupted.exit_code)


@click.group(cls=TokregGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="tokreg")
def cli() -> None:
    """tokreg: train subword tokenizers, keep every version in a SQL registry, and load them
    through a fast encoder.

    \b
    Example:
        tokreg train mini corpus.txt --vocab-size 8000 && tokreg list
    """
