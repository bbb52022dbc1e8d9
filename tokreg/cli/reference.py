"""The CLI reference page (docs/cli.md), made from the commands themselves: every command's
usage, help and options exactly as `--help` prints them, at a fixed width so the page is the
same on every machine. `python -m tokreg.cli.reference > docs/cli.md` (`just docs`) writes it;
a test fails when the page and the commands differ, so the reference cannot go stale."""

from __future__ import annotations

from collections.abc import Iterator

import click

from .app import TokregGroup

#: Columns the help is wrapped at (click's default depends on the terminal).
WIDTH = 100


def _commands(group: click.Group, path: list[str]) -> Iterator[tuple[list[str], click.Command]]:
    for name in sorted(group.commands):
        cmd = group.commands[name]
        yield [*path, name], cmd
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, [*path, name])


def page(root: click.Group) -> str:
    """Markdown: a section per command (groups and their subcommands in name order)."""
    out = [
        "# CLI reference",
        "",
        "Made from the commands by `just docs` (`python -m tokreg.cli.reference`); a test checks it is",
        "current. Every command also takes `--db PATH_OR_URL` (or `TOKREG_DB`) and `--help`.",
        "",
    ]
    if isinstance(root, TokregGroup):
        root.load_all()
    # make_context applies each command's own settings (`-h` as well as `--help`), as a run does.
    top = root.make_context("tokreg", [], resilient_parsing=True, terminal_width=WIDTH, max_content_width=WIDTH)
    for path, cmd in _commands(root, []):
        parent = top
        for name in path[:-1]:
            group = parent.command
            assert isinstance(group, click.Group)
            parent = group.commands[name].make_context(name, [], parent=parent, resilient_parsing=True)
        ctx = cmd.make_context(path[-1], [], parent=parent, resilient_parsing=True)
        out += [f"## tokreg {' '.join(path)}", "", "```text", cmd.get_help(ctx).rstrip(), "```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    from . import cli

    click.echo(page(cli), nl=False)
