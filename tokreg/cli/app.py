"""The `tokreg` group: the one place where library errors and Ctrl-C become one line on stderr
and the exit code of their class (see errors.py); never a traceback.

An interruption is reported from what the registry holds, not from where the KeyboardInterrupt
happened to land: the command's `Registry` remembers the write it attempted and asks the
database whether that write was committed (`Registry.interruption`).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, Optional

import click

from ..console import finished
from ..errors import Interrupted, PinLabelWarning, TokregError

#: Where a command keeps the Registry it opened (click's `meta` is shared by nested contexts).
REGISTRY = "tokreg.registry"


def _interruption(ctx: Optional[click.Context]) -> str:
    reg = ctx.meta.get(REGISTRY) if ctx is not None else None
    return str(
        reg.interruption() if reg is not None else Interrupted("interrupted; nothing was written to the registry")
    )


def _fail(ctx: click.Context, message: str, code: int) -> None:
    ctx.exit(_said(message, code))


class TokregGroup(click.Group):
    """Turns library errors and Ctrl-C into one line and an exit code; imports each command's
    module when the command is first asked for (`lazy_commands`: name -> (module, function))."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands: dict[str, tuple[str, str]] = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*self.lazy_commands, *(n for n in super().list_commands(ctx) if n not in self.lazy_commands)]

    def load_all(self) -> click.Group:
        """Every command imported and registered (`commands` then holds them all), for whoever
        walks them: the CLI reference, the test that each is documented."""
        for name in self.lazy_commands:
            self.get_command(click.Context(self), name)
        return self

    def get_command(self, ctx: click.Context, cmd_name: str) -> Optional[click.Command]:
        if cmd_name not in self.commands and cmd_name in self.lazy_commands:
            module, attr = self.lazy_commands[cmd_name]
            with collector_paused():
                command = getattr(importlib.import_module(module), attr)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def make_context(
        self, info_name: Optional[str], args: list[str], parent: Optional[click.Context] = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except KeyboardInterrupt:
            finished()
            click.echo(f"tokreg: error: {_interruption(None)}", err=True)
            raise click.exceptions.Exit(Interrupted.exit_code) from None

    def invoke(self, ctx: click.Context) -> Any:
        with _warning_lines(PinLabelWarning):
            return self._invoke(ctx)

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            rv = super().invoke(ctx)
            finished()
            return rv
        except TokregError as e:
            _fail(ctx, str(e), e.exit_code)
        except KeyboardInterrupt:
            _fail(ctx, _interruption(ctx), Interrupted.exit_code)
        except click.Abort as e:
            if isinstance(e.__context__, KeyboardInterrupt):  # Ctrl-C at a prompt
                _fail(ctx, _interruption(ctx), Interrupted.exit_code)
            raise
        finally:
            reg = ctx.meta.pop(REGISTRY, None)
            if reg is not None:
                reg.close()


def run(args: Sequence[str]) -> int:
    """Runs one `tokreg` command line and returns its exit status, every outcome said the
    group's way. Not click's standalone `main`: that turns a KeyboardInterrupt which lands
    outside a command (between the parsing and the command's own handler above, a few
    microseconds) into a blank line, "Aborted!" and status 1, where tokreg's rule is one line
    and status 130. Shell completion requests (`_TOKREG_COMPLETE` set) still go to click."""
    if os.environ.get("_TOKREG_COMPLETE"):
        cli.main(args=list(args), prog_name="tokreg")
    ctx: Optional[click.Context] = None
    try:
        with cli.make_context("tokreg", list(args)) as ctx:
            cli.invoke(ctx)
        return 0
    except click.exceptions.Exit as e:  # --help, --version, and the group's own exits (_fail)
        return e.exit_code
    except click.ClickException as e:  # usage errors: click's usage, hint and error lines
        e.show()
        return e.exit_code
    except click.Abort as e:
        if isinstance(e.__context__, KeyboardInterrupt):  # Ctrl-C at a prompt the group did not see
            return _said(_interruption(ctx), Interrupted.exit_code)
        click.echo("Aborted!", err=True)  # a confirmation answered no (`tokreg rm`), or stdin closed
        return 1
    except EOFError:  # stdin closed at a prompt: what click says
        click.echo("Aborted!", err=True)
        return 1
    except KeyboardInterrupt:  # before the command's handler was in place: nothing was run
        return _said(_interruption(ctx), Interrupted.exit_code)
    except BrokenPipeError:
        # The reader of stdout went away (`tokreg sql ... | head`): the rest of the output has
        # nowhere to go. Python's documented way: stdout pointed at /dev/null so that the
        # interpreter's last flush does not fail too; status 1, as a cut pipeline reports.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _said(message: str, code: int) -> int:
    finished()
    click.echo(f"tokreg: error: {message}", err=True)
    return code


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for the block (as it was after it). Importing a
    command's modules allocates tens of thousands of objects that live on (functions, classes)
    and form no garbage cycles; the collector would walk them again at each threshold, for
    nothing (importing `tokreg train`'s modules: about 7% of their CPU). Not for a whole run:
    paused through `tokreg train`, a 6 MB run peaked 2-4 MB higher (83 against 79-81 MB; the run
    leaves no garbage cycles, so the cause is not known), for no CPU that could be measured."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


@contextlib.contextmanager
def _warning_lines(*kinds: type[Warning]) -> Iterator[None]:
    """Shows the warnings of these kinds as `tokreg: warning:` lines as they happen (once per
    command each); any other warning is shown as Python shows it."""
    with warnings.catch_warnings():
        shown = warnings.showwarning

        def show(message: Any, category: type[Warning], *args: Any, **kwargs: Any) -> None:
            if issubclass(category, kinds):
                click.echo(f"tokreg: warning: {message}", err=True)
            else:
                shown(message, category, *args, **kwargs)

        warnings.showwarning = show
        for kind in kinds:
            warnings.simplefilter("default", kind)
        yield


@click.group(cls=TokregGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="tokreg")
def cli() -> None:
    """tokreg: train subword tokenizers, keep every version in a SQL registry, and load them
    through a fast encoder.

    \b
    Example:
        tokreg train mini corpus.txt --vocab-size 8000 && tokreg list
    """
